package perf

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/argo"
)

// ArgoScriptCacheSize is the size of Argo CD's LRU cache of compiled
// scripts (util/lua's compiledScriptCacheSize).
const ArgoScriptCacheSize = 1024

// ArgoVM is baseline (e), Argo CD's method for running resource
// customizations, as util/lua/lua.go runs them (VM.runLua and
// runLuaWithResourceActionParameters, ExecuteHealthLua,
// ExecuteResourceActionDiscovery, ExecuteResourceAction):
//
//   - a fresh gopher-lua state per call, closed after it: lua.NewState with
//     every standard library for health scripts (Argo CD enables them for
//     its built-in scripts) and none for discovery and actions (the
//     server's VM), then package, base, table and the safe os library
//     (time and date) opened with CallByParam, os preloaded for
//     require("os"), and a one-second context.WithTimeout set on the state
//     (SetContext: the VM checks it at every instruction);
//   - the compiled FunctionProto taken from a mutex-guarded LRU cache of
//     ArgoScriptCacheSize entries keyed by the script's text
//     (compiledScriptCache; compiled by LoadString on a miss), instantiated
//     with NewFunctionFromProto and run with PCall;
//   - the object converted into Lua tables by Argo CD's decodeValue
//     (gopher-json's DecodeValue with int, int32 and int64 added), and
//     actionParams by the same function;
//   - the result read from the top of the stack, encoded to JSON by
//     gopher-json's Encode and unmarshaled with encoding/json into Argo
//     CD's types (HealthStatus; a map of ResourceActions; an Unstructured
//     or a list of ImpactedResources, cleaned by cleanReturnedObj).
//
// Scripts run plainly, as in Argo CD: no sandbox, no instruction budget,
// no memory guard. Results are returned as package argo's types so that
// they compare with karta's runner; discovery returns the actions in Go's
// map order, as Argo CD does.
type ArgoVM struct {
	mu    sync.Mutex
	cache map[string]*list.Element
	lru   *list.List
}

type argoCacheEntry struct {
	script string
	proto  *lua.FunctionProto
}

// NewArgoVM returns a VM with an empty script cache.
func NewArgoVM() *ArgoVM {
	return &ArgoVM{cache: map[string]*list.Element{}, lru: list.New()}
}

// argoOsFuncs is Argo CD's safe os library: time and date, whose
// implementations Argo CD copied from gopher-lua's os library (taken
// from there, once).
var argoOsFuncs = func() map[string]lua.LGFunction {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	L.Push(L.NewFunction(lua.OpenOs))
	L.Push(lua.LString(lua.OsLibName))
	L.Call(1, 1)
	os := L.Get(-1).(*lua.LTable)
	out := map[string]lua.LGFunction{}
	for _, name := range []string{"time", "date"} {
		out[name] = os.RawGetString(name).(*lua.LFunction).GFunction
	}
	return out
}()

// argoOpenSafeOs is Argo CD's OpenSafeOs, argoSafeOsLoader its
// SafeOsLoader (require("os")).
func argoOpenSafeOs(L *lua.LState) int {
	L.Push(L.RegisterModule(lua.OsLibName, argoOsFuncs))
	return 1
}

func argoSafeOsLoader(L *lua.LState) int {
	L.Push(L.SetFuncs(L.NewTable(), argoOsFuncs))
	return 1
}

var argoLibs = []struct {
	name string
	open lua.LGFunction
}{
	{lua.LoadLibName, lua.OpenPackage},
	{lua.BaseLibName, lua.OpenBase},
	{lua.TabLibName, lua.OpenTable},
	{lua.OsLibName, argoOpenSafeOs},
}

// compiled is compiledScripts.get, or LoadString and compiledScripts.add
// on a miss (loadCompiledFunction).
func (vm *ArgoVM) compiled(l *lua.LState, script string) (*lua.LFunction, error) {
	vm.mu.Lock()
	if e, ok := vm.cache[script]; ok {
		vm.lru.MoveToFront(e)
		proto := e.Value.(*argoCacheEntry).proto
		vm.mu.Unlock()
		return l.NewFunctionFromProto(proto), nil
	}
	vm.mu.Unlock()
	fn, err := l.LoadString(script)
	if err != nil {
		return nil, err
	}
	vm.mu.Lock()
	defer vm.mu.Unlock()
	if _, ok := vm.cache[script]; !ok {
		vm.cache[script] = vm.lru.PushFront(&argoCacheEntry{script: script, proto: fn.Proto})
		if vm.lru.Len() > ArgoScriptCacheSize {
			last := vm.lru.Back()
			vm.lru.Remove(last)
			delete(vm.cache, last.Value.(*argoCacheEntry).script)
		}
	}
	return fn, nil
}

// run is runLuaWithResourceActionParameters: it returns the value on top
// of the stack after the chunk ran (nil when it returned nothing).
// params is set as actionParams when not nil.
func (vm *ArgoVM) run(obj *unstructured.Unstructured, script string, openLibs bool, params map[string]string) (lua.LValue, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: !openLibs})
	defer l.Close()
	for _, lib := range argoLibs {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			return nil, err
		}
	}
	l.PreloadModule(lua.OsLibName, argoSafeOsLoader)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	if params != nil {
		t := l.CreateTable(0, len(params))
		for k, v := range params {
			t.RawSetH(lua.LString(k), argoDecodeValue(l, v))
		}
		l.SetGlobal("actionParams", t)
	}
	l.SetGlobal("obj", argoDecodeValue(l, obj.Object))
	fn, err := vm.compiled(l, script)
	if err != nil {
		return nil, err
	}
	l.Push(fn)
	if err := l.PCall(0, lua.MultRet, nil); err != nil {
		return nil, err
	}
	return l.Get(-1), nil
}

// argoDecodeValue is Argo CD's decodeValue.
func argoDecodeValue(L *lua.LState, value any) lua.LValue {
	switch v := value.(type) {
	case bool:
		return lua.LBool(v)
	case float64:
		return lua.LNumber(v)
	case string:
		return lua.LString(v)
	case json.Number:
		return lua.LString(v)
	case int:
		return lua.LNumber(v)
	case int32:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case []any:
		arr := L.CreateTable(len(v), 0)
		for _, item := range v {
			arr.Append(argoDecodeValue(L, item))
		}
		return arr
	case map[string]any:
		tbl := L.CreateTable(0, len(v))
		for key, item := range v {
			tbl.RawSetH(lua.LString(key), argoDecodeValue(L, item))
		}
		return tbl
	}
	return lua.LNil
}

// Errors of gopher-json's encoder.
var (
	errArgoNested      = errors.New("cannot encode recursively nested tables to JSON")
	errArgoSparseArray = errors.New("cannot encode sparse array")
	errArgoInvalidKeys = errors.New("cannot encode mixed or invalid key types")
)

// argoEncode is gopher-json's Encode: json.Marshal of a value whose
// MarshalJSON marshals each table's members in turn.
func argoEncode(v lua.LValue) ([]byte, error) {
	return json.Marshal(argoJSONValue{v: v, visited: map[*lua.LTable]bool{}})
}

type argoJSONValue struct {
	v       lua.LValue
	visited map[*lua.LTable]bool
}

func (j argoJSONValue) MarshalJSON() ([]byte, error) {
	switch x := j.v.(type) {
	case lua.LBool:
		return json.Marshal(bool(x))
	case lua.LNumber:
		return json.Marshal(float64(x))
	case *lua.LNilType:
		return []byte("null"), nil
	case lua.LString:
		return json.Marshal(string(x))
	case *lua.LTable:
		if j.visited[x] {
			return nil, errArgoNested
		}
		j.visited[x] = true
		key, value := x.Next(lua.LNil)
		switch key.Type() {
		case lua.LTNil:
			return []byte("[]"), nil
		case lua.LTNumber:
			arr := make([]argoJSONValue, 0, x.Len())
			want := lua.LNumber(1)
			for key != lua.LNil {
				if key.Type() != lua.LTNumber {
					return nil, errArgoInvalidKeys
				}
				if key != want {
					return nil, errArgoSparseArray
				}
				arr = append(arr, argoJSONValue{value, j.visited})
				want++
				key, value = x.Next(key)
			}
			return json.Marshal(arr)
		case lua.LTString:
			obj := map[string]argoJSONValue{}
			for key != lua.LNil {
				if key.Type() != lua.LTString {
					return nil, errArgoInvalidKeys
				}
				obj[key.String()] = argoJSONValue{value, j.visited}
				key, value = x.Next(key)
			}
			return json.Marshal(obj)
		}
		return nil, errArgoInvalidKeys
	}
	return nil, fmt.Errorf("cannot encode %s to JSON", j.v.Type().String())
}

func argoWrongType(v lua.LValue) error {
	return fmt.Errorf("expect table output from Lua script, not %s", v.Type().String())
}

// Health is ExecuteHealthLua: nil is no assessment, a table is unmarshaled
// into {status, message}, a status that is not one of Argo CD's words is
// Unknown with the message "Lua returned an invalid health status".
func (vm *ArgoVM) Health(obj *unstructured.Unstructured, script string) (argo.Health, error) {
	v, err := vm.run(obj, script, true, nil)
	if err != nil {
		return argo.Health{}, err
	}
	switch v.Type() {
	case lua.LTNil:
		return argo.Health{}, nil
	case lua.LTTable:
	default:
		return argo.Health{}, argoWrongType(v)
	}
	data, err := argoEncode(v)
	if err != nil {
		return argo.Health{}, err
	}
	var h argo.Health
	if err := json.Unmarshal(data, &h); err != nil {
		return argo.Health{}, err
	}
	switch h.Status {
	case argo.StatusHealthy, argo.StatusProgressing, argo.StatusDegraded, argo.StatusSuspended, argo.StatusMissing, argo.StatusUnknown:
		return h, nil
	}
	return argo.Health{Status: argo.StatusUnknown, Message: argo.InvalidHealthStatus}, nil
}

// Discover is ExecuteResourceActionDiscovery. The actions come in Go's
// map order.
func (vm *ArgoVM) Discover(obj *unstructured.Unstructured, script string) ([]argo.Action, error) {
	v, err := vm.run(obj, script, false, nil)
	if err != nil {
		return nil, err
	}
	if v.Type() != lua.LTTable {
		return nil, argoWrongType(v)
	}
	data, err := argoEncode(v)
	if err != nil {
		return nil, err
	}
	actions := make([]argo.Action, 0)
	if string(data) == "[]" {
		return actions, nil
	}
	byName := map[string]any{}
	if err := json.Unmarshal(data, &byName); err != nil {
		return nil, err
	}
	for name, value := range byName {
		a := argo.Action{Name: name, Disabled: argoActionDisabled(value)}
		if _, empty := value.([]any); empty {
			actions = append(actions, a)
			continue
		}
		b, err := json.Marshal(value)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &a); err != nil {
			return nil, err
		}
		actions = append(actions, a)
	}
	return actions, nil
}

// argoActionDisabled is isActionDisabled.
func argoActionDisabled(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for key, val := range m {
		if b, ok := val.(bool); ok && key == "disabled" {
			return b
		}
	}
	return false
}

// Action is ExecuteResourceAction with actionParams: a JSON array is a
// list of ImpactedResources, anything else the object itself to patch;
// resources to patch are cleaned by cleanReturnedObj.
func (vm *ArgoVM) Action(obj *unstructured.Unstructured, script string, params map[string]string) ([]argo.ImpactedResource, error) {
	if params == nil {
		params = map[string]string{}
	}
	v, err := vm.run(obj, script, false, params)
	if err != nil {
		return nil, err
	}
	if v.Type() != lua.LTTable {
		return nil, argoWrongType(v)
	}
	data, err := argoEncode(v)
	if err != nil {
		return nil, err
	}
	if len(data) < 2 {
		return nil, errors.New("Lua output was not a valid json object or array")
	}
	var out []argo.ImpactedResource
	if data[0] == '[' && data[len(data)-1] == ']' {
		var list []struct {
			Object    *unstructured.Unstructured `json:"resource"`
			Operation argo.Operation             `json:"operation"`
		}
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, err
		}
		for _, r := range list {
			var o map[string]any
			if r.Object != nil {
				o = r.Object.Object
			}
			out = append(out, argo.ImpactedResource{Operation: r.Operation, Object: o})
		}
	} else {
		var u unstructured.Unstructured
		if err := json.Unmarshal(data, &u); err != nil {
			return nil, err
		}
		out = append(out, argo.ImpactedResource{Operation: argo.OperationPatch, Object: u.Object})
	}
	for i, r := range out {
		if r.Operation == argo.OperationPatch && r.Object != nil {
			out[i].Object = argoCleanObject(r.Object, obj.Object)
		}
	}
	return out, nil
}

// argoCleanObject is cleanReturnedObj: where the original has an object
// and the result an empty array, the original's value is put back.
func argoCleanObject(out, orig map[string]any) map[string]any {
	for key, old := range orig {
		now, ok := out[key]
		if !ok {
			continue
		}
		switch n := now.(type) {
		case map[string]any:
			if o, ok := old.(map[string]any); ok {
				out[key] = argoCleanObject(n, o)
			}
		case []any:
			switch o := old.(type) {
			case map[string]any:
				if len(n) == 0 {
					out[key] = o
				}
			case []any:
				out[key] = argoCleanArray(n, o)
			}
		}
	}
	return out
}

// argoCleanArray is cleanReturnedArray (which indexes the original by the
// result's indexes; a longer result would panic there, so it stops at the
// original's length here).
func argoCleanArray(out, orig []any) []any {
	for i := range out {
		if i >= len(orig) {
			break
		}
		switch n := out[i].(type) {
		case map[string]any:
			if o, ok := orig[i].(map[string]any); ok {
				out[i] = argoCleanObject(n, o)
			}
		case []any:
			if o, ok := orig[i].([]any); ok {
				out[i] = argoCleanArray(n, o)
			}
		}
	}
	return out
}
