package kube

import (
	"encoding/json"
	"fmt"
	"math"

	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kartalua/karta/luaapi"
)

// moduleName is the name scripts require: local kube = require("kube").
const moduleName = "kube"

// Module is the sandbox's kube module: Karmada's four helpers with
// Karmada's contracts (pkg/resourceinterpreter/customized/declarative/
// luavm/kube.go), so Karmada's scripts run unmodified.
//
//   - resourceAdd(q1, q2, …) → the sum of the quantity strings (nil counts
//     as 0) as a canonical quantity string: resourceAdd("500m", "1") is
//     "1500m".
//   - getResourceQuantity(q) → the quantity as a number (Quantity's
//     AsApproximateFloat64: "500m" is 0.5, "1Gi" is 1073741824); nil is 0.
//   - accuratePodRequirements(podTemplate) → {resourceRequest=…,
//     nodeClaim=…} or nil: see pod.go.
//   - getPodDependencies(podTemplate, namespace) → an array of
//     {apiVersion, kind, namespace, name}, or nil when there are none; a
//     nil namespace is "default". See deps.go.
//
// Quantities are strings: a number argument is an error, as in Karmada.
// Tables reach the Go types through Karmada's conversion (Unmarshal);
// a lazy view (karta's generated hooks) is accepted where a table is.
// Each helper charges the call before it works (charges.go; the rows of
// docs/charges.md).
//
// The helpers are hand-written rather than Go functions exposed through
// gopher-luar: Karmada's contract is in its argument checks (nil is a zero
// quantity or the default namespace, a number is a namespace but not a
// quantity, an exact argument count with Karmada's own messages), which
// luar's reflective conversion does not give (TestLuarFunctionSemantics).
//
// A sandbox with the module:
//
//	luaapi.NewState(luaapi.SandboxOptions{Modules: luaapi.Loaders(kube.Module)})
var Module = module(false)

// TextModule is Module converting as Karmada's helpers do, through
// JSON text both ways: the pod template is printed and decoded by
// encoding/json, the result marshalled and unmarshalled. Its results and
// errors are Module's; it is Karmada's method, for the baselines of
// the benchmarks (test/perf).
var TextModule = module(true)

func module(text bool) luaapi.Module {
	return luaapi.Module{Name: moduleName, Funcs: map[string]lua.LGFunction{
		"resourceAdd":             kubeResourceAdd,
		"getResourceQuantity":     kubeGetResourceQuantity,
		"accuratePodRequirements": func(L *lua.LState) int { return podRequirementsHelper(L, text) },
		"getPodDependencies":      func(L *lua.LState) int { return podDependenciesHelper(L, text) },
	}}
}

func kubeResourceAdd(L *lua.LState) int {
	luaapi.Charge(L, quantityCallSteps)
	qs := make([]resource.Quantity, L.GetTop())
	for i := range qs {
		qs[i] = checkQuantity(L, i+1)
	}
	chargeQuantities(L, qs...)
	var sum resource.Quantity
	for _, q := range qs {
		sum.Add(q)
	}
	L.Push(lua.LString(sum.String()))
	return 1
}

func kubeGetResourceQuantity(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.RaiseError("getResourceQuantity only accepts one argument")
	}
	luaapi.Charge(L, quantityCallSteps)
	q := checkQuantity(L, 1)
	chargeQuantities(L, q)
	f := q.AsApproximateFloat64()
	switch {
	case f < 0:
		L.RaiseError("int approximation unexpectedly returned a negative value: %s", q.String())
	case math.IsInf(f, 1):
		L.RaiseError("int approximation unexpectedly returned an infinite value: %s", q.String())
	}
	L.Push(lua.LNumber(f))
	return 1
}

func podRequirementsHelper(L *lua.LState, text bool) int {
	if L.GetTop() != 1 {
		L.RaiseError("getPodRequirements only accepts one argument")
	}
	tmpl := checkPodTemplate(L, 1, text)
	chargeTemplateQuantities(L, &tmpl.Spec)
	pushKubeResult(L, podRequirements(tmpl), text)
	return 1
}

func podDependenciesHelper(L *lua.LState, text bool) int {
	if L.GetTop() != 2 {
		L.RaiseError("getPodDependencies only accepts two argument")
	}
	tmpl := checkPodTemplate(L, 1, text)
	namespace := checkNamespace(L, 2)
	pushKubeResult(L, podDependencies(&tmpl.Spec, namespace), text)
	return 1
}

// checkQuantity reads argument n as Karmada's checkResourceQuantity does:
// nil is the zero quantity, a string is parsed, anything else is a type
// error. Karmada's resource.MustParse panics on a bad string, and
// gopher-lua turns the panic into an error; here it is an ordinary Lua
// error with MustParse's message, which pcall catches as it does there.
func checkQuantity(L *lua.LState, n int) resource.Quantity {
	switch v := L.Get(n).(type) {
	case *lua.LNilType:
		return resource.Quantity{}
	case lua.LString:
		q, err := resource.ParseQuantity(string(v))
		if err != nil {
			L.RaiseError("cannot parse '%v': %v", string(v), err)
		}
		return q
	default:
		L.TypeError(n, lua.LTString)
		return resource.Quantity{}
	}
}

// checkNamespace is Karmada's: nil is "default", a string or a number is
// taken as a string.
func checkNamespace(L *lua.LState, n int) string {
	switch L.Get(n).Type() {
	case lua.LTNil:
		return "default"
	case lua.LTString, lua.LTNumber:
		return L.CheckString(n)
	default:
		L.TypeError(n, lua.LTString)
		return ""
	}
}

// checkPodTemplate converts argument n into a PodTemplateSpec through
// Karmada's result conversion (no references: nested empty tables are
// dropped); text takes Karmada's route, through the JSON text.
func checkPodTemplate(L *lua.LState, n int, text bool) *corev1.PodTemplateSpec {
	luaapi.Charge(L, podCallSteps)
	v := L.Get(n)
	if _, isView := luaapi.ViewOf(v); !isView {
		v = L.CheckTable(n)
	}
	chargeTree(L, v)
	tmpl := &corev1.PodTemplateSpec{}
	var err error
	if text {
		err = kubeUnmarshalText(L, v, tmpl)
	} else {
		err = Unmarshal(L, v, tmpl)
	}
	if err != nil {
		L.RaiseError("fail to convert lua value to PodTemplateSpec: %v", err)
	}
	return tmpl
}

// pushKubeResult hands a helper's Go result to Lua as Karmada does: by way
// of its JSON (a nil pointer or slice is nil), built without the text
// unless text is set.
func pushKubeResult(L *lua.LState, v any, text bool) {
	if g, ok := kubeResultGeneric(v); ok && !text {
		// The round trip's value, built without the text (result.go),
		// as lazy tables (Lazy: Value's tables, converted as the script
		// reads them): a script that returns it untouched, as
		// GetReplicas' requirements usually are, has it decoded from Go.
		if lv, err := Lazy(L, g); err == nil {
			L.Push(lv)
			return
		}
	}
	data, err := json.Marshal(v)
	if err == nil {
		var generic any
		if err = json.Unmarshal(data, &generic); err == nil {
			var lv lua.LValue
			if lv, err = Value(L, generic); err == nil {
				L.Push(lv)
				return
			}
		}
	}
	L.RaiseError("%s", fmt.Sprintf("fail to convert %T to Lua value: %v", v, err))
}
