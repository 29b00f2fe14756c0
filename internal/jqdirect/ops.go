package jqdirect

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// The binary operators and jq's order of values, as gojq defines them
// (operator.go, compare.go) over the values in flight of direct
// evaluation: numbers computed in float64 as the generated Lua computes
// them, anything gojq would fail on (or compute beyond ±2^53) declines.

// binNode is an arithmetic or comparison operator: jq's cartesian product,
// the right operand's outputs outermost.
type binNode struct {
	op   gojq.Operator
	l, r dnode
	// ones: both operands are single (one.go). chain: ones, op is
	// arithmetic and an operand is an arithmetic operator (arith.go).
	ones, chain bool
}

func (n *binNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	if n.ones {
		v, has, ok := n.oneOf(c, in)
		if has {
			out = append(out, v)
		}
		return out, ok
	}
	rs := c.buf()
	defer func() { c.free(rs) }()
	rs, ok := n.r.eval(c, in, rs)
	if !ok {
		return out, false
	}
	ls := c.buf()
	defer func() { c.free(ls) }()
	if len(rs) > 0 {
		if ls, ok = n.l.eval(c, in, ls); !ok || !c.step(len(ls)*len(rs)) {
			return out, false
		}
	}
	for _, r := range rs {
		for _, l := range ls {
			v, ok := binary(c, n.op, l, r)
			if !ok {
				return out, false
			}
			out = append(out, v)
		}
	}
	return out, true
}

func binary(c *dctx, op gojq.Operator, l, r any) (any, bool) {
	switch op {
	case gojq.OpEq, gojq.OpNe, gojq.OpLt, gojq.OpLe, gojq.OpGt, gojq.OpGe:
		cmp, ok := compare(c, l, r)
		if !ok {
			return nil, false
		}
		switch op {
		case gojq.OpEq:
			return cmp == 0, true
		case gojq.OpNe:
			return cmp != 0, true
		case gojq.OpLt:
			return cmp < 0, true
		case gojq.OpLe:
			return cmp <= 0, true
		case gojq.OpGt:
			return cmp > 0, true
		}
		return cmp >= 0, true
	case gojq.OpAdd:
		if v, done, ok := addComposite(c, l, r); done {
			return v, ok
		}
	case gojq.OpSub:
		if la, ok := l.([]any); ok {
			ra, ok := r.([]any)
			if !ok {
				return nil, false
			}
			return subArrays(c, la, ra)
		}
	case gojq.OpMul:
		if x, ok := l.(map[string]any); ok {
			y, ok := r.(map[string]any)
			if !ok {
				return nil, false
			}
			return mergeDeep(c, x, y)
		}
	}
	a, ok := dnumber(l)
	if !ok {
		return nil, false
	}
	b, ok := dnumber(r)
	if !ok {
		return nil, false
	}
	f, ok := arithmetic(op, a, b)
	if !ok {
		return nil, false
	}
	return boxFloat(f), true
}

// addComposite is + on anything but two numbers: null is its identity,
// strings concatenate, arrays concatenate and objects merge (the right
// operand's keys win). done is false for two numbers (or a number and
// something that declines there).
func addComposite(c *dctx, l, r any) (v any, done, ok bool) {
	// null is the identity of +.
	if l == nil {
		return r, true, isJSONValue(r)
	}
	if r == nil {
		return l, true, isJSONValue(l)
	}
	switch x := l.(type) {
	case string:
		y, ok := r.(string)
		if !ok {
			return nil, true, false
		}
		// A concatenation charges its length: doubling a string in a
		// pipe must reach the budget, not the process's memory.
		if !c.step(chargeString(len(x)+len(y))) || !c.alloc(len(x)+len(y)) {
			return nil, true, false
		}
		return x + y, true, true
	case []any:
		y, ok := r.([]any)
		if !ok || !c.step(len(x)+len(y)+1) || !c.alloc(arrayBytes(len(x)+len(y))) {
			return nil, true, false
		}
		// A new array, of values converted as the Lua path's table of
		// both holds them.
		arr := make([]any, 0, len(x)+len(y))
		for _, src := range [][]any{x, y} {
			for _, e := range src {
				o, ok := outValue(e)
				if !ok {
					return nil, true, false
				}
				arr = append(arr, o)
			}
		}
		return arr, true, true
	case map[string]any:
		y, ok := r.(map[string]any)
		if !ok || !c.step(len(x)+len(y)+1) {
			return nil, true, false
		}
		// Merging nothing into an object whose members are already as
		// the Lua path holds them is that object: a view's chain of
		// optional keys (`{cpu: "25m"} + (… // {})`) copies nothing.
		if len(y) == 0 && outMembers(x) {
			return x, true, true
		}
		if len(x) == 0 && outMembers(y) {
			return y, true, true
		}
		if !c.alloc(objectBytes(len(x) + len(y))) {
			return nil, true, false
		}
		m := make(map[string]any, len(x)+len(y))
		for _, src := range []map[string]any{x, y} {
			for k, e := range src {
				o, ok := outValue(e)
				if !ok {
					return nil, true, false
				}
				m[k] = o
			}
		}
		return m, true, true
	}
	return nil, false, false
}

// mergeDeep is * on two objects, gojq's deepMergeObjects: y's members
// over x's, two objects under one key merged in turn. The result is a new
// object whose members are converted as outValue converts them.
func mergeDeep(c *dctx, x, y map[string]any) (any, bool) {
	if !c.step(chargeMap(len(x)+len(y))) || !c.alloc(objectBytes(len(x)+len(y))) {
		return nil, false
	}
	m := make(map[string]any, len(x)+len(y))
	for k, e := range x {
		o, ok := outValue(e)
		if !ok {
			return nil, false
		}
		m[k] = o
	}
	for k, e := range y {
		if xm, ok := m[k].(map[string]any); ok {
			if ym, ok := e.(map[string]any); ok {
				if m[k], ok = mergeDeep(c, xm, ym); !ok {
					return nil, false
				}
				continue
			}
		}
		o, ok := outValue(e)
		if !ok {
			return nil, false
		}
		m[k] = o
	}
	return m, true
}

// outMembers reports whether every member of m is as outValue gives it,
// so that m stands for its converted copy.
func outMembers(m map[string]any) bool {
	for _, e := range m {
		switch x := e.(type) {
		case nil, bool, string, map[string]any, []any:
		case int64:
			if x < -maxExactFloat || x > maxExactFloat {
				return false
			}
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) || (x == math.Trunc(x) && math.Abs(x) <= maxExactFloat) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// chargeMap is the steps a map of n members costs to make, at the rate of
// chargeString (a step per 16 bytes): its table and the members' slots.
// Deep merge makes one per level of both operands, and a DAG of shared
// objects (`{a: ., b: .} | …`) is exponentially many levels.
func chargeMap(n int) int { return 24 + 2*n }

// chargeString is the steps a string of n bytes costs to make.
func chargeString(n int) int { return n/16 + 1 }

// subArrays is l - r on arrays: l without the elements equal to one of r,
// a comparison per pair (charged).
func subArrays(c *dctx, l, r []any) (any, bool) {
	if !c.step(len(l)*len(r)+len(l)+1) || !c.alloc(arrayBytes(len(l))) {
		return nil, false
	}
	arr := make([]any, 0, len(l))
next:
	for _, e := range l {
		for _, x := range r {
			cmp, ok := compare(c, e, x)
			if !ok {
				return nil, false
			}
			if cmp == 0 {
				continue next
			}
		}
		o, ok := outValue(e)
		if !ok {
			return nil, false
		}
		arr = append(arr, o)
	}
	return arr, true
}

// compare orders two values as jq does (null < false < true < numbers <
// strings < arrays < objects; arrays element by element, objects by their
// sorted keys, then their values key by key), charging a step per value
// compared.
func compare(c *dctx, l, r any) (int, bool) {
	lr, ok := rank(l)
	if !ok {
		return 0, false
	}
	rr, ok := rank(r)
	if !ok {
		return 0, false
	}
	if lr != rr {
		return cmp.Compare(lr, rr), true
	}
	switch lr {
	case rankNumber:
		a, _ := dnumber(l)
		b, _ := dnumber(r)
		return cmp.Compare(a, b), true
	case rankString:
		return strings.Compare(l.(string), r.(string)), true
	case rankArray:
		la, ra := l.([]any), r.([]any)
		if !c.step(min(len(la), len(ra)) + 1) {
			return 0, false
		}
		for i := range min(len(la), len(ra)) {
			if v, ok := compare(c, la[i], ra[i]); !ok || v != 0 {
				return v, ok
			}
		}
		return cmp.Compare(len(la), len(ra)), true
	case rankObject:
		lm, rm := l.(map[string]any), r.(map[string]any)
		if !c.step(len(lm) + len(rm) + 1) {
			return 0, false
		}
		lk, rk := sortedKeys(lm), sortedKeys(rm)
		if v := slices.Compare(lk, rk); v != 0 {
			return v, true
		}
		for _, k := range lk {
			if v, ok := compare(c, lm[k], rm[k]); !ok || v != 0 {
				return v, ok
			}
		}
	}
	return 0, true
}

func sortedKeys(m map[string]any) []string {
	// Sized at once: slices.Sorted(maps.Keys(m)) grows its slice by
	// appending, four allocations for KServe's eight predictor members.
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

const (
	rankNull = iota
	rankFalse
	rankTrue
	rankNumber
	rankString
	rankArray
	rankObject
)

func rank(v any) (int, bool) {
	switch x := v.(type) {
	case nil:
		return rankNull, true
	case bool:
		if x {
			return rankTrue, true
		}
		return rankFalse, true
	case string:
		return rankString, true
	case []any:
		return rankArray, true
	case map[string]any:
		return rankObject, true
	}
	if _, ok := dnumber(v); ok {
		return rankNumber, true
	}
	return 0, false
}
