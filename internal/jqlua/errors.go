package jqlua

import (
	"errors"

	"github.com/kartalua/karta/internal/third_party/gojq"
	lua "github.com/yuin/gopher-lua"
)

// OutputLimit is the most outputs one evaluation of an expression may
// produce; one more is an error.
const OutputLimit = 10000

// TooManyOutputs is the message of the error past OutputLimit, the same on
// every path that evaluates jq.
const TooManyOutputs = "too many outputs (limit 10000)"

// Error is a jq error: what gojq would report for the same expression and
// input, message for message. Inside Lua it travels as the error value of a
// Lua error (a userdata whose tostring is Msg), so that callers can tell a
// jq error from any other Lua error and recover the exact message with
// AsError.
type Error struct {
	// Msg is gojq's error message, e.g. `expected an object but got: array
	// ([])` or `error: boom`.
	Msg string
	// value is what `try … catch` hands to its handler: the argument of
	// error(v) (possibly null), or nil when that is Msg itself. It is a
	// value of the state that raised the error and is dropped when the
	// error leaves Lua through Eval.
	value lua.LValue
}

func (e *Error) Error() string { return e.Msg }

// AsError returns the jq error carried by err: an *Error itself, or a
// *lua.ApiError (as returned by PCall, CallByParam or DoString) whose error
// value is a jq error raised by the runtime.
func AsError(err error) (*Error, bool) {
	var je *Error
	if errors.As(err, &je) {
		return je, true
	}
	var ae *lua.ApiError
	if errors.As(err, &ae) {
		return errorOf(ae.Object)
	}
	return nil, false
}

// errorOf returns the jq error a Lua error value carries.
func errorOf(lv lua.LValue) (*Error, bool) {
	if ud, ok := lv.(*lua.LUserData); ok {
		e, ok := ud.Value.(*Error)
		return e, ok
	}
	return nil, false
}

// raise raises e as a Lua error in L. It does not return.
func (r *runtime) raise(L *lua.LState, e *Error) {
	ud := L.NewUserData()
	ud.Value = e
	ud.Metatable = r.errorMT
	rethrow(L, ud)
}

// rethrow raises v as a Lua error without closing upvalues. LState.Error
// first closes every open upvalue of the state, not only those of the
// frames the error unwinds (gopher-lua issue #448): each live closure then
// stops sharing its variables with the function that made it. A try would
// thus break the closures of generated code (the flag of `//`) and of the
// accessor's callers. Lua closes only the unwound frames' upvalues; their
// closures are unreachable after the error, so leaving them open is
// equivalent.
func rethrow(L *lua.LState, v lua.LValue) {
	L.Push(v)
	L.Panic(L)
}

// raiseGo raises a gojq error as a jq error.
func (r *runtime) raiseGo(L *lua.LState, err error) {
	r.raise(L, r.fromGojqError(L, err))
}

// fromGojqError keeps gojq's message and, for error(v), the value v.
func (r *runtime) fromGojqError(L *lua.LState, err error) *Error {
	e := &Error{Msg: err.Error()}
	var ve gojq.ValueError
	if errors.As(err, &ve) {
		e.value = r.vs.ToLuaView(L, ve.Value())
	}
	return e
}

// catchValue is the input of a catch handler for e.
func (e *Error) catchValue() lua.LValue {
	if e.value != nil {
		return e.value
	}
	return lua.LString(e.Msg)
}

// typeErrorPreview renders a value the way gojq's type errors do:
// `number (1)`, `object ({"a":1})`, or `null`.
func typeErrorPreview(v any) string {
	if v == nil {
		return "null"
	}
	return gojq.TypeOf(v) + " (" + gojq.Preview(v) + ")"
}
