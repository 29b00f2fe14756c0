// Package controller keeps an interpreter.Registry in step with the Karta
// objects of a cluster. It watches run.ai/v1alpha1 kartas (and the legacy
// optimization.nvidia.com/v1alpha1 resourceinterfaces when the cluster
// serves them) with a dynamic informer, loads, validates and compiles each
// one, swaps the Programs in the registry atomically and reports the
// outcome in the object's status.conditions:
//
//   - Accepted: the Karta loaded and validated, and no older Karta claims
//     its kind. False lists every problem, one per line, with its field
//     path (reason Invalid), or names the Karta that won the kind (reason
//     Conflict).
//   - Compiled: the Karta's Program is registered for its kind. False with
//     the compile error (CompileFailed), or when the Karta is not accepted
//     (NotAccepted, Conflict).
//   - SchemaChecked (with Options.CRDs): the accepted Karta's paths fit the
//     openAPIV3Schema of the CRD its kind is served from (karta/schemacheck,
//     as karta validate --live checks them). False lists every refuted path
//     with the Karta's field path and the schema path (SchemaMismatch);
//     Unknown when no CRD serves the kind (CRDNotServed) or it could not be
//     read (CRDUnreadable).
//
// They carry observedGeneration, as does status.observedGeneration.
//
// The Programs in the registry when New is called are the base (the
// `karta controller` command puts the built-ins there): a valid Karta
// shadows the base Program of its kind, and the base Program comes back
// when the Karta is deleted or becomes invalid. Replaced Programs are not
// closed: a caller may hold one it got from the registry just before the
// swap, and Program.Close would fail its next call. A Program holds only
// Go memory (Lua states are plain Go values), so the garbage collector
// frees it once no caller holds it.
//
// An embedding control plane creates the Controller with New, runs it with
// Run and reads the registry; with leader election it starts the
// Controller in standby (Options.Standby) and calls SetLeading when it
// wins or loses: every replica keeps its registry current, only the leader
// writes status.
package controller
