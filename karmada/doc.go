// Package karmada runs Karmada's ResourceInterpreterCustomizations
// (config.karmada.io/v1alpha1) in karta's Lua sandbox, with the results
// Karmada's own declarative interpreter gives:
//
//   - Load reads customizations; NewInterpreter merges them by target kind
//     with Karmada's precedence (name order, the first script of an
//     operation wins, every dependency script runs) and compiles each
//     script once.
//   - The Interpreter's methods run one operation each with Karmada's
//     calling convention: GetReplicas, GetComponents, ReviseReplica,
//     Retain, AggregateStatus, ReflectStatus, InterpretHealth and
//     GetDependencies. Objects reach Lua, and results come back, through
//     Karmada's JSON pipeline (package karmada/kube: Value and Unmarshal,
//     gopher-json encoding, the empty-table fix-up, unmarshalling into
//     Karmada's types), so a script written for Karmada behaves the same.
//   - ForProgram answers the same operations for a Karta's
//     interpreter.Program in process (a script may override each with
//     Karmada's calling convention), and Export writes the Karta as a
//     self-contained customization whose answers inside Karmada are the
//     same.
//   - RunTestDir runs a directory in Karmada's third-party customization
//     layout and compares results as Karmada's harness does.
//
// The Karmada API types are defined here (types.go) with Karmada's JSON
// tags; the package does not import Karmada.
package karmada
