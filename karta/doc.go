// Package karta holds the Karta API: the Go types of the Karta custom resource
// (run.ai/v1alpha1 Karta, and the legacy optimization.nvidia.com/v1alpha1
// ResourceInterface which shares its schema), strict loading from YAML or
// JSON, and validation that reports every problem at once with API-server
// style field paths.
//
// The data flow is one way:
//
//	bytes ──► Load ──► []*Karta ──► Validate ──► Problems
//
// Load applies the CRD defaults (condition field names) exactly as the API
// server would, so a Karta loaded from a file and one read from a cluster
// behave the same. This package knows nothing of Lua: compiling a Karta into
// hooks is the interpreter package's job.
//
// +kubebuilder:object:generate=true
// +groupName=run.ai
// +versionName=v1alpha1
package karta
