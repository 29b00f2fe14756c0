package perf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/karmada/kube"
	"github.com/kartalua/karta/luaapi"
)

// KarmadaPoolSize is the size of Karmada's pool of Lua states (its
// configurable interpreter's luavm.New(false, 10)).
const KarmadaPoolSize = 10

// KarmadaVM is baseline (c), Karmada's luavm method for running
// ResourceInterpreterCustomizations: a state from a fixed pool of 10, the
// script parsed and compiled on every call (Karmada's l.DoString), every
// argument marshalled to JSON and decoded into Lua tables (gopher-json's
// Decode, as luavm's decodeValue does for objects and typed slices), and
// results converted by Karmada's pipeline (tableInto: the JSON text,
// fixed up, then encoding/json; its kube helpers convert through the text
// too, kube.TextModule). It runs in karta's sandbox with Karmada's per-call
// globals (kube.Env), so that its results are karta's, which the
// benchmarks assert.
type KarmadaVM struct {
	kinds   map[schema.GroupVersionKind]*vmKind
	timeout time.Duration
	// protos is nil in baseline (c); in baseline (d) (NewKarmadaCachedVM)
	// it caches each script's compiled prototype.
	protos *sync.Map

	mu      sync.Mutex
	idle    chan *lua.LState
	created int
}

// vmKind holds a kind's effective scripts after Karmada's merge (the first
// customization by name sets an operation; every dependency script runs).
type vmKind struct {
	scripts map[karmada.Operation]vmScript
	deps    []vmScript
}

type vmScript struct {
	name, text string
	// key is the script's GVK, operation and, for dependency scripts, its
	// index: the key of baseline (d)'s cache.
	key vmScriptKey
}

type vmScriptKey struct {
	gvk   schema.GroupVersionKind
	op    karmada.Operation
	index int
}

// cachedProto is a baseline (d) cache entry: the script it was compiled
// from, checked on every hit as Karmada's proposal does (a customization
// edited in place is compiled again).
type cachedProto struct {
	text  string
	proto *lua.FunctionProto
}

// NewKarmadaVM merges custs by target as Karmada does. Nothing is
// compiled.
func NewKarmadaVM(custs []*karmada.Customization) *KarmadaVM {
	vm := &KarmadaVM{kinds: map[schema.GroupVersionKind]*vmKind{}, timeout: time.Second,
		idle: make(chan *lua.LState, KarmadaPoolSize)}
	sorted := append([]*karmada.Customization(nil), custs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, c := range sorted {
		gvk := schema.FromAPIVersionAndKind(c.Spec.Target.APIVersion, c.Spec.Target.Kind)
		k := vm.kinds[gvk]
		if k == nil {
			k = &vmKind{scripts: map[karmada.Operation]vmScript{}}
			vm.kinds[gvk] = k
		}
		for _, op := range karmada.Operations {
			text := op.Script(&c.Spec.Customizations)
			if text == "" {
				continue
			}
			s := vmScript{name: "karmada:" + c.Name + "/" + op.Field(), text: text, key: vmScriptKey{gvk: gvk, op: op}}
			if op == karmada.OpInterpretDependency {
				s.key.index = len(k.deps)
				k.deps = append(k.deps, s)
			} else if _, ok := k.scripts[op]; !ok {
				k.scripts[op] = s
			}
		}
	}
	return vm
}

// NewKarmadaCachedVM is baseline (d): baseline (c) with the cache of
// compiled scripts Karmada's maintainers have proposed
// (karmada-io/karmada#7597, #7602): the FunctionProto of each script is
// kept per GVK and operation (and index, for the several dependency
// scripts of a kind) with the script's text, reused while the text is
// unchanged, and run with NewFunctionFromProto on a pooled state.
// Arguments and results still go through JSON as in (c): the best
// Karmada's runtime can become without redesign.
func NewKarmadaCachedVM(custs []*karmada.Customization) *KarmadaVM {
	vm := NewKarmadaVM(custs)
	vm.protos = &sync.Map{}
	return vm
}

// compile is l.DoString's compilation in (c), and the proposal's cache
// lookup in (d).
func (vm *KarmadaVM) compile(s vmScript) (*lua.FunctionProto, error) {
	if vm.protos == nil {
		return luaapi.Compile(s.name, s.text)
	}
	if e, ok := vm.protos.Load(s.key); ok && e.(cachedProto).text == s.text {
		return e.(cachedProto).proto, nil
	}
	proto, err := luaapi.Compile(s.name, s.text)
	if err != nil {
		return nil, err // errors are not cached
	}
	vm.protos.Store(s.key, cachedProto{text: s.text, proto: proto})
	return proto, nil
}

// Close closes the pooled states.
func (vm *KarmadaVM) Close() {
	for {
		select {
		case L := <-vm.idle:
			L.Close()
		default:
			return
		}
	}
}

// get takes a pooled state, creating one while fewer than
// KarmadaPoolSize exist, else waiting for one (Karmada's fixedpool).
func (vm *KarmadaVM) get() *lua.LState {
	select {
	case L := <-vm.idle:
		return L
	default:
	}
	vm.mu.Lock()
	if vm.created < KarmadaPoolSize {
		vm.created++
		vm.mu.Unlock()
		// Karmada's kube helpers convert through JSON text both ways.
		return luaapi.NewState(luaapi.SandboxOptions{
			Modules: luaapi.Loaders(kube.TextModule),
		})
	}
	vm.mu.Unlock()
	return <-vm.idle
}

func (vm *KarmadaVM) put(L *lua.LState) { vm.idle <- L }

// runScript is luavm's RunScript: the arguments through JSON, the script
// compiled and run, then its function called; convert reads the results
// while the state is held.
func (vm *KarmadaVM) runScript(ctx context.Context, s vmScript, fn string, nret int, args []any, convert func(L *lua.LState, res []lua.LValue) error) error {
	L := vm.get()
	defer vm.put(L)
	vars := make([]lua.LValue, len(args))
	for i, a := range args {
		v, err := decodeJSONValue(L, a)
		if err != nil {
			return err
		}
		vars[i] = v
	}
	proto, err := vm.compile(s)
	if err != nil {
		return err
	}
	env := kube.Env(L)
	chunk := luaapi.Instantiate(L, proto, env)
	runner := L.NewFunction(func(L *lua.LState) int {
		L.Push(chunk)
		L.Call(0, 0)
		f := env.RawGetString(fn)
		if f.Type() != lua.LTFunction {
			L.RaiseError("can't get function %s, please check the function name", fn)
		}
		L.Push(f)
		for _, v := range vars {
			L.Push(v)
		}
		L.Call(len(vars), nret)
		return nret
	})
	res, err := luaapi.CallProtected(ctx, L, vm.timeout, runner, nret)
	if err != nil {
		return err
	}
	return convert(L, res)
}

// decodeJSONValue is luavm's decodeValue for what the operations pass: a
// number as it is, anything else marshalled to JSON and decoded by
// gopher-json (objects' keys inserted in sorted order, so that pairs()
// visits them as karta's conversion does and results compare).
func decodeJSONValue(L *lua.LState, v any) (lua.LValue, error) {
	switch x := v.(type) {
	case nil:
		return lua.LNil, nil
	case int64:
		return lua.LNumber(x), nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var x any
	if err := json.Unmarshal(data, &x); err != nil {
		return nil, err
	}
	return jsonToLua(L, x), nil
}

// jsonToLua is gopher-json's DecodeValue.
func jsonToLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t := L.CreateTable(0, len(x))
		for _, k := range keys {
			t.RawSetString(k, jsonToLua(L, x[k]))
		}
		return t
	case []any:
		t := L.CreateTable(len(x), 0)
		for _, e := range x {
			t.Append(jsonToLua(L, e))
		}
		return t
	case float64:
		return lua.LNumber(x)
	case string:
		return lua.LString(x)
	case bool:
		return lua.LBool(x)
	}
	return lua.LNil
}

// ErrNotScripted is an operation the kind's customizations do not script.
var ErrNotScripted = errors.New("operation not scripted")

// Run runs a Karmada test case's operation the luavm way and returns its
// named results as karmada.Interpreter.RunOperation does.
func (vm *KarmadaVM) Run(ctx context.Context, op karmada.Operation, tc *karmada.TestCase) ([]karmada.Result, error) {
	obj := tc.DesiredObj
	if obj == nil {
		obj = tc.ObservedObj
	}
	if obj == nil {
		return nil, errors.New("no object")
	}
	k := vm.kinds[obj.GroupVersionKind()]
	if k == nil {
		return nil, ErrNotScripted
	}
	s, scripted := k.scripts[op]
	if !scripted && op != karmada.OpInterpretDependency {
		return nil, ErrNotScripted
	}
	switch op {
	case karmada.OpRetain:
		out := &unstructured.Unstructured{}
		err := vm.runScript(ctx, s, op.Hook(), 1, []any{tc.DesiredObj, tc.ObservedObj}, tableInto(out, tc.DesiredObj, tc.ObservedObj))
		return []karmada.Result{{Name: "retained", Value: out}}, err
	case karmada.OpInterpretReplica:
		var replicas int32
		var requires *karmada.ReplicaRequirements
		err := vm.runScript(ctx, s, op.Hook(), 2, []any{obj}, func(L *lua.LState, res []lua.LValue) error {
			n, ok := res[0].(lua.LNumber)
			if !ok {
				return fmt.Errorf("result type %s is not number", res[0].Type())
			}
			replicas = int32(n)
			if t, ok := res[1].(*lua.LTable); ok {
				requires = &karmada.ReplicaRequirements{}
				return tableInto(requires)(L, []lua.LValue{t})
			}
			return nil
		})
		return []karmada.Result{{Name: "replica", Value: replicas}, {Name: "requires", Value: requires}}, err
	case karmada.OpInterpretComponent:
		var components []karmada.Component
		err := vm.runScript(ctx, s, op.Hook(), 1, []any{obj}, func(L *lua.LState, res []lua.LValue) error {
			if _, ok := res[0].(*lua.LTable); ok {
				return tableInto(&components)(L, res)
			}
			return nil
		})
		return []karmada.Result{{Name: "components", Value: components}}, err
	case karmada.OpReviseReplica:
		out := &unstructured.Unstructured{}
		err := vm.runScript(ctx, s, op.Hook(), 1, []any{obj, tc.InputReplicas}, tableInto(out, obj))
		return []karmada.Result{{Name: "revised", Value: out}}, err
	case karmada.OpInterpretStatus:
		var raw runtime.RawExtension
		err := vm.runScript(ctx, s, op.Hook(), 1, []any{obj}, tableInto(&raw))
		return []karmada.Result{{Name: "status", Value: &raw}}, err
	case karmada.OpAggregateStatus:
		out := &unstructured.Unstructured{}
		var items any
		if tc.StatusItems != nil {
			items = tc.StatusItems
		}
		err := vm.runScript(ctx, s, op.Hook(), 1, []any{obj, items}, tableInto(out))
		return []karmada.Result{{Name: "aggregatedStatus", Value: out}}, err
	case karmada.OpInterpretHealth:
		var healthy bool
		err := vm.runScript(ctx, s, op.Hook(), 1, []any{obj}, func(_ *lua.LState, res []lua.LValue) error {
			b, ok := res[0].(lua.LBool)
			if !ok {
				return fmt.Errorf("result type %s is not bool", res[0].Type())
			}
			healthy = bool(b)
			return nil
		})
		return []karmada.Result{{Name: "healthy", Value: healthy}}, err
	case karmada.OpInterpretDependency:
		deps, err := vm.dependencies(ctx, k, obj)
		return []karmada.Result{{Name: "dependencies", Value: deps}}, err
	}
	return nil, fmt.Errorf("operation %s is not supported", op)
}

// tableInto converts a table result into out, Karmada's
// ConvertLuaResultInto: the result encoded as JSON text (gopher-json's
// rules), the text's empty tables fixed up against the references, which
// Karmada marshals to JSON on every call, then encoding/json into out.
// kube.Unmarshal reads the call's objects, an Unstructured result
// and typed results without that text, so the baselines run the text
// pipeline themselves.
func tableInto(out any, references ...any) func(L *lua.LState, res []lua.LValue) error {
	return func(L *lua.LState, res []lua.LValue) error {
		t, ok := res[0].(*lua.LTable)
		if !ok {
			return fmt.Errorf("expect the returned type is table but got %s", res[0].Type())
		}
		refs := make([]any, len(references))
		for i, r := range references {
			data, err := json.Marshal(r)
			if err != nil {
				return fmt.Errorf("json marshal reference failed: %w", err)
			}
			refs[i] = json.RawMessage(data)
		}
		data, err := kube.ResultJSON(L, t, reflect.ValueOf(out).Elem().Kind() == reflect.Struct, refs...)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, out); err != nil {
			return &luaapi.ConvertError{Path: "result", Msg: err.Error()}
		}
		return nil
	}
}

// dependencies runs every dependency script and keeps the union, as
// Karmada's configurable interpreter does.
func (vm *KarmadaVM) dependencies(ctx context.Context, k *vmKind, obj *unstructured.Unstructured) ([]karmada.DependentObjectReference, error) {
	if len(k.deps) == 0 {
		return nil, ErrNotScripted
	}
	out := []karmada.DependentObjectReference{}
	seen := map[string]bool{}
	for _, s := range k.deps {
		var refs []karmada.DependentObjectReference
		err := vm.runScript(ctx, s, karmada.OpInterpretDependency.Hook(), 1, []any{obj}, func(L *lua.LState, res []lua.LValue) error {
			if err := tableInto(&refs)(L, res); err != nil {
				return err
			}
			return karmada.VerifyDependencies(refs)
		})
		if err != nil {
			return nil, err
		}
		for _, r := range refs {
			key := r.APIVersion + "\x00" + r.Kind + "\x00" + r.Namespace + "\x00" + r.Name
			if r.LabelSelector != nil || !seen[key] {
				seen[key] = true
				out = append(out, r)
			}
		}
	}
	karmada.SortDependencies(out)
	return out, nil
}
