package luaapi

import lua "github.com/yuin/gopher-lua"

// The tests' readers of values and their compiler of trusted chunks:
// nothing outside luaapi needs them since a Karta's states load no
// generated Lua.

// isNull reports whether lv is the null sentinel of L.
func isNull(L *lua.LState, lv lua.LValue) bool { return lv == lua.LValue(ValuesOf(L).Null) }

// kindOf returns the JSON kind of lv in L.
func kindOf(L *lua.LState, lv lua.LValue) Kind { return ValuesOf(L).Kind(lv) }

// compileTrusted is Compile without the guard rewrite: the bridge
// benchmarks compare the bridges, not the guard.
func compileTrusted(chunk, source string) (*lua.FunctionProto, error) {
	return compile(chunk, source, false)
}
