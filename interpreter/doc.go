// Package interpreter joins a Karta to Lua: it generates the hook functions
// of a Karta, compiles them once into a Program, runs them on a pool of
// sandboxed gopher-lua states and returns typed results.
package interpreter
