package kube

import (
	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kartalua/karta/luaapi"
)

// treeNodeCost is what converting one Lua value of a helper's argument to
// Go allocates, on the high side: a node of the tree and a field or
// element of the Go value it decodes into.
const treeNodeCost = 96

// chargeTree charges the kube helpers' conversion of v (a pod template) to
// Go before it runs: a step and treeNodeCost bytes per value and key, and
// the bytes of every string, counting a table each time it is reached —
// the conversion copies a table shared by 20,000 containers 20,000 times.
// It stops at luaapi.MaxDepth, where the conversion fails. A view of the object
// is the object's own size, checked before the call, and is not charged.
func chargeTree(L *lua.LState, v lua.LValue) {
	pending := 0
	flush := func() {
		luaapi.Charge(L, pending)
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

// quantityDigitsPerStep: adding and printing quantities of d decimal
// digits (resource.Quantity turns 1e999999999 into a billion-digit
// integer when it meets 1m) costs about d²/2^14 steps.
const quantityDigitsShift = 14

// chargeQuantities charges the quantities of a helper's call before their
// arithmetic: their decimal digits, d = the mantissa's digits plus the
// exponent's magnitude, summed over the call, as d²/2^14 steps and 2d
// bytes (math/big's words and the canonical text).
func chargeQuantities(L *lua.LState, qs ...resource.Quantity) {
	var d int64
	for i := range qs {
		dec := qs[i].AsDec()
		scale := int64(dec.Scale())
		d += max(scale, -scale) + int64(dec.UnscaledBig().BitLen()/3+1)
	}
	d = min(d, 1<<31)
	luaapi.Charge(L, int(d*d>>quantityDigitsShift))
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
