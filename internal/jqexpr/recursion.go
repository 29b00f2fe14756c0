package jqexpr

import (
	"fmt"
	"slices"
	"strings"
)

// recursion reports each set of mutually recursive defs once, naming the
// first def of the set. Recursion is the one way to loop without a banned
// builtin, so it is rejected even when it would terminate: that cannot be
// decided statically.
//
// The call graph is conservative: a def calls every local def mentioned in
// its body, including inside closures it passes to other functions
// (`def g: f(g)` counts as g calling itself, as it would when f runs its
// argument).
func (w *walker) recursion() {
	for _, scc := range stronglyConnected(w.defs) {
		first := scc[0]
		if len(scc) == 1 && !calls(first, first) {
			continue
		}
		msg := fmt.Sprintf("recursive function %q is not allowed", first.key)
		if len(scc) > 1 {
			others := make([]string, 0, len(scc)-1)
			for _, d := range scc[1:] {
				others = append(others, fmt.Sprintf("%q", d.key))
			}
			msg += " (it calls itself through " + strings.Join(others, ", ") + ")"
		}
		w.report(first.key, msg)
	}
}

func calls(from, to *defNode) bool {
	for _, c := range from.calls {
		if c == to {
			return true
		}
	}
	return false
}

// stronglyConnected returns the strongly connected components of the call
// graph (Tarjan), each sorted in definition order, ordered by their first
// def.
func stronglyConnected(defs []*defNode) [][]*defNode {
	order := make(map[*defNode]int, len(defs))
	for i, d := range defs {
		order[d] = i
	}
	index := map[*defNode]int{}
	low := map[*defNode]int{}
	onStack := map[*defNode]bool{}
	var stack []*defNode
	var out [][]*defNode
	var connect func(d *defNode)
	connect = func(d *defNode) {
		index[d] = len(index)
		low[d] = index[d]
		stack = append(stack, d)
		onStack[d] = true
		for _, c := range d.calls {
			if _, seen := index[c]; !seen {
				connect(c)
				low[d] = min(low[d], low[c])
			} else if onStack[c] {
				low[d] = min(low[d], index[c])
			}
		}
		if low[d] != index[d] {
			return
		}
		var scc []*defNode
		for {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[top] = false
			scc = append(scc, top)
			if top == d {
				break
			}
		}
		slices.SortFunc(scc, func(a, b *defNode) int { return order[a] - order[b] })
		out = append(out, scc)
	}
	for _, d := range defs {
		if _, seen := index[d]; !seen {
			connect(d)
		}
	}
	slices.SortFunc(out, func(a, b []*defNode) int { return order[a[0]] - order[b[0]] })
	return out
}
