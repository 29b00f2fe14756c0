// Package kube is Karmada's kube Lua library and value pipeline, as
// Karmada's resource interpreter gives them to its customizations, so that
// Karmada's scripts run unmodified in karta's sandbox: the kube module's
// four helpers (Module; TextModule is Karmada's own route through JSON
// text, for the benchmarks' baselines), Go values handed to a script as
// gopher-json decodes them (Value, or lazily Lazy), a script's results
// read back by gopher-json's encoding and Karmada's empty-table fix-up
// (Unmarshal, ResultJSON), and the per-call environment whose assigned
// globals behave as in Karmada's one global table (Env).
//
// It is built on luaapi's module API (luaapi/module.go): the helpers
// charge the call before they work, as every library function of the
// sandbox does (docs/charges.md).
package kube
