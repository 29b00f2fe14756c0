package kube

import (
	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kartalua/karta/luaapi"
)

// treeNodeCost and treeNodeSteps are what a helper spends on one Lua value
// of its argument, on the high side: converting it to the typed Go pod
// template (a node of the tree, a field of corev1's structs, a map entry of
// a ResourceList) and walking the result. Measured on 20,000 containers of
// nine values each (karmada's TestHostileHealthScripts): about 1.5 µs and
// 480 bytes per value, where a Lua instruction — one step — is about 27 ns.
// Charged lower, a hostile loop over a large template ran three calls'
// worth of conversion before the budget noticed, and under the race
// detector that took the call past its CPU bound.
const (
	treeNodeCost  = 480
	treeNodeSteps = 48
)

// chargeTree charges the kube helpers' conversion of v (a pod template) to
// Go before it runs: treeNodeSteps and treeNodeCost bytes per value and key, and
// the bytes of every string, counting a table each time it is reached —
// the conversion copies a table shared by 20,000 containers 20,000 times.
// It stops at luaapi.MaxDepth, where the conversion fails. A view of the object
// is the object's own size, checked before the call, and is not charged.
func chargeTree(L *lua.LState, v lua.LValue) {
	pending := 0
	flush := func() {
		luaapi.Charge(L, pending*treeNodeSteps)
		luaapi.ChargeMemory(L, pending*treeNodeCost)
		pending = 0
	}
	var walk func(v lua.LValue, depth int)
	walk = func(v lua.LValue, depth int) {
		if pending++; pending >= 256 {
			flush()
		}
		switch x := v.(type) {
		case lua.LString:
			luaapi.ChargeMemory(L, len(x))
		case *lua.LTable:
			if depth >= luaapi.MaxDepth {
				return
			}
			x.ForEach(func(k, v lua.LValue) {
				if s, ok := k.(lua.LString); ok {
					luaapi.ChargeMemory(L, len(s))
				}
				walk(v, depth+1)
			})
		}
	}
	walk(v, 0)
	flush()
}

// Adding and printing quantities of d decimal digits (resource.Quantity
// turns 1e999999999 into a billion-digit integer when it meets 1m) costs
// about d/2 + d²/2^14 steps: measured, resourceAdd("9e1000", "1m") takes
// 14.6 µs, some 540 instructions' time.
const (
	quantityDigitsShift   = 14
	quantityDigitsPerStep = 2
)

// The fixed part of a helper's call, whatever its argument: parsing and
// printing a small quantity (resourceAdd("1", "1m") takes 1.7 µs), and
// building, walking and returning a pod template's typed value (an
// accuratePodRequirements call on a one-container template takes 20 µs
// beyond building its table). Charged at the start of the call, so a loop
// of cheap-looking calls ends on the step limit, not on the deadline.
const (
	quantityCallSteps = 64
	podCallSteps      = 768
)

// chargeQuantities charges the quantities of a helper's call before their
// arithmetic: their decimal digits, d = the mantissa's digits plus the
// exponent's magnitude, summed over the call, as d/2 + d²/2^14 steps and
// 2d bytes (math/big's words and the canonical text).
func chargeQuantities(L *lua.LState, qs ...resource.Quantity) {
	var d int64
	for i := range qs {
		dec := qs[i].AsDec()
		scale := int64(dec.Scale())
		d += max(scale, -scale) + int64(dec.UnscaledBig().BitLen()/3+1)
	}
	d = min(d, 1<<31)
	luaapi.Charge(L, int(d/quantityDigitsPerStep+d*d>>quantityDigitsShift))
	luaapi.ChargeMemory(L, int(2*d))
}

// chargeTemplateQuantities charges the quantities accuratePodRequirements
// scales to integers (each one by its own digits: a request of
// 1e999999999 becomes a billion-digit integer), before it does.
func chargeTemplateQuantities(L *lua.LState, spec *corev1.PodSpec) {
	each := func(rl corev1.ResourceList) {
		for _, q := range rl {
			chargeQuantities(L, q)
		}
	}
	for _, cs := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
		for i := range cs {
			each(cs[i].Resources.Requests)
			each(cs[i].Resources.Limits)
		}
	}
	each(spec.Overhead)
}
