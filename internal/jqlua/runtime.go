package jqlua

import (
	"context"
	"errors"
	"github.com/kartalua/karta/internal/jqvars"
	"math"

	"github.com/kartalua/karta/internal/third_party/gojq"
	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
)

// runtime is the per-state side of the J table. Its functions are Go
// closures over it, so the hot paths reach the null sentinel and the kind
// markers without a registry lookup.
type runtime struct {
	vs      *luaapi.Values
	null    *lua.LUserData
	errorMT *lua.LTable
	J       *lua.LTable
	// iters are the iterator functions of J.each, created once per state
	// so that a loop allocates at most a small state for objects.
	iters struct{ empty, arrayView, arrayTable, keyed *lua.LFunction }
	// inexact records that some integer arithmetic left ±2^53, where gojq
	// is exact and a float64 is not. The differential tests skip such
	// evaluations; nothing else reads it.
	inexact bool
	// vars are the values of the variables the fallback programs were
	// compiled with, bound for the current call (BindVariables).
	vars []any
}

// BindVariables sets the values the gojq fallbacks of L's accessors run
// with, in the order of the variables their programs were compiled with
// (a Karta's references, "$name"), until the next call; nil unbinds. A
// fallback compiled with more variables than are bound sees null for the
// rest, one compiled with fewer the first ones.
func BindVariables(L *lua.LState, vals []any) { runtimeOf(L).vars = vals }

const runtimeKey = "karta.jqlua.runtime"

// Runtime returns the J table of L: the jq primitives that generated
// accessors call, created on first use and the same table afterwards. Pass
// it to the chunk as its first argument; it must not be reachable from
// user scripts, which could otherwise replace its functions for every later
// call on the state.
func Runtime(L *lua.LState) *lua.LTable { return runtimeOf(L).J }

func runtimeOf(L *lua.LState) *runtime {
	if ud, ok := L.G.Registry.RawGetString(runtimeKey).(*lua.LUserData); ok {
		if r, ok := ud.Value.(*runtime); ok {
			return r
		}
	}
	vs := luaapi.ValuesOf(L)
	r := &runtime{vs: vs, null: vs.Null, errorMT: L.NewTable(), J: L.NewTable()}
	r.errorMT.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		if e, ok := errorOf(L.Get(1)); ok {
			L.Push(lua.LString(e.Msg))
		} else {
			L.Push(lua.LString("jq error"))
		}
		return 1
	}))
	r.errorMT.RawSetString("__metatable", lua.LString("jq error"))
	r.J.RawSetString("null", r.null)
	r.J.RawSetString("negzero", lua.LNumber(math.Copysign(0, -1)))
	r.iters.empty = L.NewFunction(r.iterEmpty)
	r.iters.arrayView = L.NewFunction(r.iterArrayView)
	r.iters.arrayTable = L.NewFunction(r.iterArrayTable)
	r.iters.keyed = L.NewFunction(r.iterKeyed)
	fns := map[string]lua.LGFunction{
		// values and streams
		"index": r.luaIndex, "field": r.luaIndex, "index_opt": r.luaIndexOpt,
		"slice": r.luaSlice, "slice_opt": r.luaSliceOpt,
		"each": r.luaEach, "each_opt": r.luaEachOpt,
		"array": r.luaArray, "object": r.luaObject, "make_object": r.luaMakeObject,
		"emit": r.luaEmit, "collect": r.luaCollect,
		"try": r.luaTry, "error": r.luaError, goOnlyPrimitive: r.luaGojq,
		// operators
		"eq": r.luaEq, "ne": r.luaNe, "lt": r.luaLt, "le": r.luaLe, "gt": r.luaGt, "ge": r.luaGe,
		"plus": r.luaPlus, "minus": r.luaMinus, "times": r.luaTimes,
		"divide": r.luaDivide, "modulo": r.luaModulo,
		"negate": r.luaNegate, "unary_plus": r.luaUnaryPlus,
		// builtins
		"length": r.luaLength, "keys": r.luaKeys, "has": r.luaHas,
		"to_entries": r.luaToEntries, "add": r.luaAdd,
		"tostring": r.luaToString, "tonumber": r.luaToNumber, "type": r.luaType,
		"min": r.luaMin, "max": r.luaMax, "tojson": r.luaToJSON,
		"join": r.luaJoin, "split": r.luaSplit,
		"startswith": r.luaStartsWith, "endswith": r.luaEndsWith,
		"ltrimstr": r.luaLtrimstr, "rtrimstr": r.luaRtrimstr,
		"ascii_downcase": r.luaASCIIDowncase, "ascii_upcase": r.luaASCIIUpcase,
	}
	// J is exactly Primitives (and the fallback): the list is the one
	// source both runtimes follow.
	if len(fns) != len(Primitives)+1 {
		panic("jqlua: the Go runtime and Primitives disagree")
	}
	for _, name := range append(Primitives, goOnlyPrimitive) {
		fn, ok := fns[name]
		if !ok {
			panic("jqlua: the Go runtime lacks primitive " + name)
		}
		r.J.RawSetString(name, L.NewFunction(fn))
	}
	holder := L.NewUserData()
	holder.Value = r
	L.G.Registry.RawSetString(runtimeKey, holder)
	return r
}

// fallbackCodes is the Go value of a FALLBACK chunk argument.
type fallbackCodes []*gojq.Code

// FallbackValue wraps the gojq programs of a Unit (Unit.Fallbacks) as the
// FALLBACK argument of its chunk in L.
func FallbackValue(L *lua.LState, codes []*gojq.Code) *lua.LUserData {
	ud := L.NewUserData()
	ud.Value = fallbackCodes(codes)
	return ud
}

// Eval runs an accessor on input and returns its outputs in order. A jq
// error is returned as an *Error; any other failure (a Lua error, a
// cancelled context) as gopher-lua reports it.
func Eval(L *lua.LState, accessor lua.LValue, input lua.LValue) ([]lua.LValue, error) {
	out := L.NewTable()
	if err := L.CallByParam(lua.P{Fn: accessor, NRet: 0, Protect: true}, input, out); err != nil {
		if je, ok := AsError(err); ok {
			return nil, &Error{Msg: je.Msg}
		}
		return nil, err
	}
	n := out.Len()
	vs := make([]lua.LValue, n)
	for i := range n {
		vs[i] = out.RawGetInt(i + 1)
	}
	return vs, nil
}

// J.emit(out, x): append an output, at most OutputLimit per evaluation.
func (r *runtime) luaEmit(L *lua.LState) int {
	out := L.CheckTable(1)
	n := out.Len()
	if n >= OutputLimit {
		r.raise(L, &Error{Msg: TooManyOutputs})
	}
	out.RawSetInt(n+1, L.Get(2))
	return 0
}

// J.collect(acc, v): every output of accessor acc on v, as an array.
func (r *runtime) luaCollect(L *lua.LState) int {
	acc := L.CheckFunction(1)
	out := r.vs.NewArray(L, 0)
	L.Push(acc)
	L.Push(L.Get(2))
	L.Push(out)
	L.Call(2, 0)
	L.Push(out)
	return 1
}

// J.array(), J.object(): empty tables marked with their kind.
func (r *runtime) luaArray(L *lua.LState) int {
	L.Push(r.vs.NewArray(L, 0))
	return 1
}

func (r *runtime) luaObject(L *lua.LState) int {
	L.Push(r.vs.NewObject(L, 0))
	return 1
}

// J.make_object(k1, v1, k2, v2, …) builds an object as gojq's opobject
// does: pairs are taken from the last one back, the first non-string key
// found that way is the error, and the last of duplicate keys wins.
func (r *runtime) luaMakeObject(L *lua.LState) int {
	n := L.GetTop() / 2
	obj := r.vs.NewObject(L, n)
	for i := n - 1; i >= 0; i-- {
		k, v := L.Get(2*i+1), L.Get(2*i+2)
		s, ok := k.(lua.LString)
		if !ok {
			r.raise(L, &Error{Msg: "expected a string for object key but got: " + typeErrorPreview(r.toGo(L, k))})
		}
		if obj.RawGetString(string(s)) == lua.LNil {
			obj.RawSetString(string(s), v)
		}
	}
	L.Push(obj)
	return 1
}

// J.try(fn, v) runs fn(v, outs) and returns outs and, when fn raised a jq
// error, the value a catch handler receives. The outputs produced before
// the error come first, as in gojq, where they flow downstream before the
// error stops the body: the body is pure, so running it to completion
// first and then feeding its outputs on is indistinguishable. Errors that
// are not jq errors (a Lua error, a limit) pass through.
func (r *runtime) luaTry(L *lua.LState) int {
	fn := L.CheckFunction(1)
	outs := L.NewTable()
	L.Push(fn)
	L.Push(L.Get(2))
	L.Push(outs)
	if err := L.PCall(2, 0, nil); err != nil {
		var ae *lua.ApiError
		if errors.As(err, &ae) {
			if je, ok := errorOf(ae.Object); ok {
				L.Push(outs)
				L.Push(je.catchValue())
				return 2
			}
			rethrow(L, ae.Object)
		}
		L.RaiseError("%s", err.Error())
	}
	L.Push(outs)
	return 1
}

// J.error(v) raises error(v): gojq's "error: …" message, with v for catch.
func (r *runtime) luaError(L *lua.LState) int {
	v := L.Get(1)
	var msg string
	if s, ok := v.(lua.LString); ok {
		msg = "error: " + string(s)
	} else {
		// gojq's error(v) prints v as JSON, charged to the call.
		_, err := r.slowGo(L, slowError, v)
		msg = err.Error()
	}
	r.raise(L, &Error{Msg: msg, value: v})
	return 0
}

// J.gojq(FALLBACK, id, v, out) runs the precompiled gojq program id on v
// and appends its outputs, under the same output limit as translated code.
func (r *runtime) luaGojq(L *lua.LState) int {
	codes, ok := L.CheckUserData(1).Value.(fallbackCodes)
	if !ok {
		L.ArgError(1, "FALLBACK expected")
	}
	id := L.CheckInt(2)
	if id < 0 || id >= len(codes) {
		L.ArgError(2, "no such fallback")
	}
	input := r.toGo(L, L.Get(3))
	out := L.CheckTable(4)
	ctx := L.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	iter := codes[id].RunWithContext(ctx, input, jqvars.Pad(r.vars, codes[id].NumVariables())...)
	n := out.Len()
	for {
		v, ok := iter.Next()
		if !ok {
			return 0
		}
		if err, ok := v.(error); ok {
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				// A deadline is the caller's limit, not a jq error: no
				// try may catch it.
				L.RaiseError("%s", err.Error())
			}
			r.raiseGo(L, err)
		}
		if n >= OutputLimit {
			r.raise(L, &Error{Msg: TooManyOutputs})
		}
		n++
		out.RawSetInt(n, r.vs.ToLuaView(L, v))
	}
}

// Inexact reports whether integer arithmetic of L's runtime left ±2^53,
// where gojq's ints stay exact and Lua's numbers do not, since the last
// call, and clears the record. Differential tests outside this package
// skip such evaluations: they cannot agree.
func Inexact(L *lua.LState) bool {
	r := runtimeOf(L)
	was := r.inexact
	r.inexact = false
	return was
}
