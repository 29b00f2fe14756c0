// Package crd embeds the CustomResourceDefinition of the Karta kind
// (run.ai/v1alpha1), generated from the Go types by controller-gen
// (`make generate`). `karta crd` prints it.
package crd

import _ "embed"

// Manifest is the Karta CRD as YAML, with a structural schema and the same
// defaults the loader applies.
//
//go:embed run.ai_kartas.yaml
var Manifest []byte
