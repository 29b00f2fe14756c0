package karmada

import (
	"context"
	"errors"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/karmada/kube"
	"github.com/kartalua/karta/luaapi"

	"github.com/kartalua/karta/internal/statepool"
)

// argsFunc makes a call's Lua arguments in the state that runs it.
type argsFunc func(L *lua.LState) ([]lua.LValue, error)

// resultFunc converts a call's results (nret values, nil-padded) while
// the state is still held: Lua tables live in their state.
type resultFunc func(L *lua.LState, results []lua.LValue) error

// scriptsFor returns the accessor of obj's kind, or a *NotEnabledError.
func (in *Interpreter) scriptsFor(obj *unstructured.Unstructured, op Operation) (*accessor, error) {
	if obj == nil {
		return nil, &ResultError{Msg: "no object given"}
	}
	gvk := obj.GroupVersionKind()
	a := in.accessors[gvk]
	if a == nil || !a.enabled(op) {
		return nil, &NotEnabledError{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Operation: op}
	}
	return a, nil
}

// call runs one script as Karmada's RunScript does (the chunk, then its
// global function with args, nret results kept) and hands the results to
// convert. Lua errors, limits, a missing function and conversion errors
// come back as *CallError naming the script's customization.
func (in *Interpreter) call(ctx context.Context, s *script, nret int, args argsFunc, convert resultFunc) error {
	if ctx == nil {
		ctx = context.Background()
	}
	L, err := in.pool.Get(ctx)
	if err != nil {
		if errors.Is(err, statepool.ErrClosed) {
			err = errClosed
		}
		return &CallError{Customization: s.customization, Operation: s.op, Err: err}
	}
	failed := true
	defer func() {
		if failed {
			in.pool.Discard(L)
		} else {
			in.pool.Put(L)
		}
	}()
	// The arguments are lazy tables (kube.Lazy) until the results
	// are converted: kube.Unmarshal reads an untouched one from Go.
	defer luaapi.EndLazy(L)
	argv, err := args(L)
	if err != nil {
		failed = false // nothing ran: the state is as it was
		return &CallError{Customization: s.customization, Operation: s.op, Err: &ResultError{Msg: "cannot pass the arguments to Lua", Err: err}}
	}
	env := kube.Env(L)
	chunk := luaapi.Instantiate(L, in.protos[s], env)
	var undefined *UndefinedFunctionError
	// One protected call runs the chunk and the function, so that both
	// share the call's deadline and instruction budget.
	runner := L.NewFunction(func(L *lua.LState) int {
		L.Push(chunk)
		L.Call(0, 0)
		fn := env.RawGetString(s.op.Hook())
		if fn.Type() != lua.LTFunction {
			undefined = &UndefinedFunctionError{Function: s.op.Hook(), Type: fn.Type().String()}
			L.RaiseError("%s", undefined.Error())
		}
		L.Push(fn)
		for _, a := range argv {
			L.Push(a)
		}
		L.Call(len(argv), nret)
		return nret
	})
	results, err := luaapi.CallProtected(ctx, L, in.timeout, runner, nret)
	if undefined != nil {
		err = undefined
	}
	if err != nil {
		return &CallError{Customization: s.customization, Operation: s.op, Err: err}
	}
	failed = false
	if err := convert(L, results); err != nil {
		var re *ResultError
		if !errors.As(err, &re) {
			err = &ResultError{Msg: "invalid result", Err: err}
		}
		return &CallError{Customization: s.customization, Operation: s.op, Err: err}
	}
	return nil
}

// objectArgs passes objects as Karmada does (kube.Value), as lazy
// tables (kube.Lazy): a script pays for the part of an object it
// reads, and sees exactly the tables kube.Value makes.
func (in *Interpreter) objectArgs(objs ...*unstructured.Unstructured) argsFunc {
	return func(L *lua.LState) ([]lua.LValue, error) {
		out := make([]lua.LValue, len(objs))
		for i, o := range objs {
			v, err := in.argValue(L, o.Object)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
}

// argValue converts an argument: kube.Lazy, or kube.Value
// for an Interpreter made eager by the tests that compare the two.
func (in *Interpreter) argValue(L *lua.LState, v any) (lua.LValue, error) {
	if in.eagerArgs {
		return kube.Value(L, v)
	}
	return kube.Lazy(L, v)
}
