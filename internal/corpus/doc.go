// Package corpus reads, in place, the objects karta's tests and benchmarks
// run on: every built-in's examples in the form a controller holds them
// (client-go's unstructured numbers), Karmada's third-party customization
// corpus with its test cases, and karta's own directories in Argo CD's
// resource-customization layout. The benchmarks (test/perf, a module of
// their own) and the adapters' tests share it, so they run on the same
// inputs.
package corpus
