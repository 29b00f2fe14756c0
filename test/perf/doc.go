// Package perf holds karta's benchmarks and the baselines they are measured
// against in the same run, on the same objects, with the same results
// (asserted before anything is timed):
//
//   - GojqKarta: upstream Karta's library method. Every jq expression is
//     parsed and compiled with gojq at every evaluation, over a copy of the
//     object normalised by a JSON round trip (InterpretStatus, GetPodSpecs,
//     PlacePod; enough of the Karta semantics (docs/karta.md) for
//     PyTorchJob, JobSet and LeaderWorkerSet).
//   - HandGo: hand-written Go for the same hooks of the same three kinds,
//     the practical limit.
//   - KarmadaVM: Karmada's luavm method for the Karmada customization
//     corpus: a state from a pool of 10, the script parsed and compiled on
//     every call, objects marshalled to JSON and decoded into Lua tables.
//   - ArgoVM: Argo CD's util/lua method for the Argo corpus (karta's own
//     directories in Argo CD's resource-customization layout, ArgoCase): a
//     fresh state per call with Argo CD's libraries, the compiled script
//     from an LRU cache keyed by its text, the object decoded into Lua
//     tables by Argo CD's decodeValue, results through gopher-json's
//     encoding and encoding/json.
//
// The benchmarks are in the _test files; `make bench` runs them and
// test/perf/cmd/benchreport turns the output into medians, ratios and the BENCH
// lines (docs/performance.md).
package perf
