// Package luaapi is karta's Lua side that knows nothing of Kartas: the
// sandbox offered to hooks, the Go↔Lua value bridge, the `kube`, `karta` and
// `jq` Lua modules, and static inspection of Lua chunks.
package luaapi
