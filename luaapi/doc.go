// Package luaapi is karta's Lua side that knows nothing of Kartas or
// Karmada: the sandbox offered to hooks, the per-call limits, the Go↔Lua
// value bridge, static inspection of Lua chunks, and the API a Lua module
// written in Go is built on (module.go; Karmada's kube library, in
// karmada/kube, is one).
package luaapi
