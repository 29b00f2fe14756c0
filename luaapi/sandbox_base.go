package luaapi

import (
	lua "github.com/yuin/gopher-lua"
)

// sandboxPCall is pcall that does not catch what must end the call: limits,
// an expired deadline and Go panics are raised again, unchanged, so the
// call fails with them however the script wraps its code. Everything else
// behaves as gopher-lua's pcall.
func sandboxPCall(L *lua.LState) int {
	v := L.CheckAny(1)
	if v.Type() != lua.LTFunction && L.GetMetaField(v, "__call").Type() != lua.LTFunction {
		L.Push(lua.LFalse)
		L.Push(lua.LString("attempt to call a " + v.Type().String() + " value"))
		return 2
	}
	if err := pcallInner(L, L.GetTop()-1); err != nil {
		aerr := err.(*lua.ApiError)
		if sticky(L, aerr) {
			panic(aerr)
		}
		L.Push(lua.LFalse)
		L.Push(aerr.Object)
		return 2
	}
	L.Insert(lua.LTrue, 1)
	return L.GetTop()
}

// sandboxXPCall is xpcall(f, handler) with pcall's exceptions. The handler
// runs after the stack has unwound rather than at the error; without the
// debug library a handler cannot tell the difference. An error in the
// handler is returned as the error value.
func sandboxXPCall(L *lua.LState) int {
	fn := L.CheckFunction(1)
	handler := L.CheckFunction(2)
	top := L.GetTop()
	L.Push(fn)
	err := pcallInner(L, 0)
	if err == nil {
		L.Insert(lua.LTrue, top+1)
		return L.GetTop() - top
	}
	aerr := err.(*lua.ApiError)
	if sticky(L, aerr) {
		panic(aerr)
	}
	L.Push(handler)
	L.Push(aerr.Object)
	if herr := L.PCall(1, 1, nil); herr != nil {
		haerr := herr.(*lua.ApiError)
		if sticky(L, haerr) {
			panic(haerr)
		}
		L.Push(lua.LFalse)
		L.Push(haerr.Object)
		return 2
	}
	res := L.Get(-1)
	L.Pop(1)
	L.Push(lua.LFalse)
	L.Push(res)
	return 2
}

// sandboxPairs is pairs honouring a __pairs metamethod (as Lua 5.2 does):
// read-only library proxies use it to list their library, and a lazy view
// of a Go value may use it to iterate like a table. Without one it is
// gopher-lua's pairs: next, t, nil (next is its upvalue).
func sandboxPairs(L *lua.LState) int {
	v := L.CheckAny(1)
	fillArg(L, 1)
	if mp := L.GetMetaField(v, "__pairs"); mp != lua.LNil {
		L.Push(mp)
		L.Push(v)
		L.Call(1, 3)
		return 3
	}
	t := L.CheckTable(1)
	L.Push(L.Get(lua.UpvalueIndex(1)))
	L.Push(t)
	L.Push(lua.LNil)
	return 3
}

// fillingFirst returns fn (a Go function that reads its first argument
// raw when it is a table) filling a lazy table first argument before it
// runs. The wrapper keeps fn's upvalues, which gopher-lua's ipairs reads.
func fillingFirst(L *lua.LState, fn *lua.LFunction) *lua.LFunction {
	return runningFirst(fn, func(L *lua.LState) { fillArg(L, 1) })
}

// runningFirst returns fn, a Go function, running before first (which
// fills, charges or raises a limit). The copy keeps fn's upvalues, which
// some of gopher-lua's base functions read.
func runningFirst(fn *lua.LFunction, before func(L *lua.LState)) *lua.LFunction {
	orig := fn.GFunction
	wrapped := *fn
	wrapped.GFunction = func(L *lua.LState) int {
		before(L)
		return orig(L)
	}
	return &wrapped
}

// sandboxRequire returns require over a fixed set of modules: the library
// proxies and the registered modules. Nothing is ever loaded.
func sandboxRequire(modules map[string]lua.LValue) lua.LGFunction {
	return func(L *lua.LState) int {
		name := L.CheckString(1)
		m, ok := modules[name]
		if !ok {
			L.RaiseError("module %q is not available in the karta sandbox", name)
		}
		L.Push(m)
		return 1
	}
}
