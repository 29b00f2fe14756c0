package interpreter

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
)

// resolveConflicts sorts the writes into JSON-pointer order, merges
// identical ones (same location, both deletes or sets of equal values) and
// reports every other pair whose locations are equal or prefix-related
// (docs/karta.md, "Writes: all or nothing", step 3). It returns the writes left to apply: no two of them
// have prefix-related locations.
func resolveConflicts(ws []*write, errs *[]error) []*write {
	slices.SortStableFunc(ws, func(a, b *write) int { return compareLoc(a.loc, b.loc) })
	flags := make([]bool, 2*len(ws))
	drop, merged := flags[:len(ws)], flags[len(ws):]
	conflicts := 0
	for i := range ws {
		if merged[i] {
			// Its identical twin before it was compared with everything
			// below.
			continue
		}
		// Sorted, the writes below ws[i] follow it contiguously.
		for j := i + 1; j < len(ws) && hasPrefix(ws[j].loc, ws[i].loc); j++ {
			if len(ws[j].loc) == len(ws[i].loc) && sameWrite(ws[i], ws[j]) {
				drop[j], merged[j] = true, true
				continue
			}
			if conflicts++; conflicts > maxConflictErrors {
				// Any conflict fails the call; n writes of one field,
				// each its own value, are n²/2 conflicts (5,000
				// revisions took minutes of CPU), so the rest go unnamed.
				*errs = append(*errs, errMoreConflicts)
				return nil
			}
			*errs = append(*errs, &ConflictError{First: ws[i].ref(), Second: ws[j].ref(),
				FirstLocation: pointer(ws[i].loc), SecondLocation: pointer(ws[j].loc)})
			drop[i], drop[j] = true, true
		}
	}
	out := ws[:0:0]
	for i, w := range ws {
		if !drop[i] {
			out = append(out, w)
		}
	}
	return out
}

// maxConflictErrors is how many conflicts a failed call names.
const maxConflictErrors = 20

// errMoreConflicts ends the list of a call's conflicts past
// maxConflictErrors.
var errMoreConflicts = fmt.Errorf("more conflicting writes (only the first %d are named)", maxConflictErrors)

func sameWrite(a, b *write) bool {
	return a.del == b.del && (a.del || jsonEqual(a.value, b.value))
}

// compareLoc orders locations element by element, indices numerically
// and before keys, a prefix before what extends it.
func compareLoc(a, b []any) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := compareStep(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func compareStep(a, b any) int {
	ai, aInt := a.(int)
	bi, bInt := b.(int)
	switch {
	case aInt && bInt:
		return cmp.Compare(ai, bi)
	case aInt:
		return -1
	case bInt:
		return 1
	}
	return cmp.Compare(a.(string), b.(string))
}

// applyWrites applies writes (sorted, none a prefix of another) to obj
// without modifying it: only the maps and slices on the way to a written
// location are copied, so the result shares every untouched subtree with
// obj. A set creates missing intermediate objects, never arrays; a delete
// of an absent key does nothing. Every write that cannot be applied is
// reported.
func applyWrites(obj map[string]any, ws []*write) (map[string]any, []error) {
	if len(ws) == 0 {
		return obj, nil
	}
	a := &applier{}
	out, _, _ := a.apply(obj, true, ws, 0)
	if len(a.errs) > 0 {
		return nil, a.errs
	}
	m, ok := out.(map[string]any)
	if !ok {
		// Only a write at the root could do this, and emit refuses those.
		return nil, []error{fmt.Errorf("the revised object is %s, not an object", describe(out))}
	}
	return m, nil
}

type applier struct{ errs []error }

func (a *applier) fail(ws []*write, depth int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	for _, w := range ws {
		a.errs = append(a.errs, &WriteError{Source: w.ref(), Location: pointer(w.loc), Msg: msg})
	}
}

// apply returns v (present says whether it exists) with ws applied; all
// of ws share loc[:depth]. changed is false when nothing was written, in
// which case v is returned as it is.
func (a *applier) apply(v any, present bool, ws []*write, depth int) (out any, outPresent, changed bool) {
	if w := ws[0]; len(w.loc) == depth {
		// A write at v itself; no other write is below it.
		switch {
		case !w.del:
			return w.value, true, true
		case present:
			return nil, false, true
		default:
			return v, false, false
		}
	}
	switch x := v.(type) {
	case map[string]any:
		return a.applyMap(x, ws, depth, false)
	case []any:
		return a.applyArray(x, ws, depth)
	case nil:
		if allDeletes(ws) {
			return v, present, false
		}
		// A missing or null parent of a set becomes an object.
		return a.applyMap(nil, ws, depth, true)
	}
	if allDeletes(ws) && !present {
		return v, present, false
	}
	a.fail(ws, depth, "%s is %s, not an object or array", pointer(ws[0].loc[:depth]), describe(v))
	return v, present, false
}

// applyMap applies ws below the object x; created says x is missing or
// null and stands for the object a set creates.
func (a *applier) applyMap(x map[string]any, ws []*write, depth int, created bool) (any, bool, bool) {
	var out map[string]any
	for rest := ws; len(rest) > 0; {
		var g []*write
		g, rest = nextGroup(rest, depth)
		k, ok := g[0].loc[depth].(string)
		switch {
		case !ok && created:
			a.fail(g, depth, "%s does not exist, and arrays are never created", pointer(g[0].loc[:depth]))
			continue
		case !ok:
			a.fail(g, depth, "%s is an object, not an array", pointer(g[0].loc[:depth]))
			continue
		}
		child, present := x[k]
		nv, np, changed := a.apply(child, present, g, depth+1)
		if !changed {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(x)+1)
			for k2, e := range x {
				out[k2] = e
			}
		}
		if np {
			out[k] = nv
		} else {
			delete(out, k)
		}
	}
	if out == nil {
		return x, x != nil, false
	}
	return out, true, true
}

func (a *applier) applyArray(x []any, ws []*write, depth int) (any, bool, bool) {
	var out []any
	for rest := ws; len(rest) > 0; {
		var g []*write
		g, rest = nextGroup(rest, depth)
		i, ok := g[0].loc[depth].(int)
		switch {
		case !ok:
			a.fail(g, depth, "%s is an array, not an object", pointer(g[0].loc[:depth]))
			continue
		case i >= len(x):
			// Arrays are never grown: an index past the end is a typo or a
			// stale object, not a request to pad with nulls.
			a.fail(g, depth, "%s has no index %d (length %d)", pointer(g[0].loc[:depth]), i, len(x))
			continue
		case len(g) == 1 && g[0].del && len(g[0].loc) == depth+1:
			// Removing an element would shift every later index.
			a.fail(g, depth, "an array element cannot be removed")
			continue
		}
		nv, _, changed := a.apply(x[i], true, g, depth+1)
		if !changed {
			continue
		}
		if out == nil {
			out = append([]any(nil), x...)
		}
		out[i] = nv
	}
	if out == nil {
		return x, true, false
	}
	return out, true, true
}

// nextGroup splits the first group off sorted writes: those with the
// first one's step at depth.
func nextGroup(ws []*write, depth int) (group, rest []*write) {
	i := 1
	for i < len(ws) && compareStep(ws[i].loc[depth], ws[0].loc[depth]) == 0 {
		i++
	}
	return ws[:i], ws[i:]
}

func allDeletes(ws []*write) bool {
	for _, w := range ws {
		if !w.del {
			return false
		}
	}
	return true
}

// diffOps returns the RFC 6902 operations from a to b, by diff: a value
// under a missing key is one add of the outermost missing parent, a
// changed value a replace, a missing key a remove. Shared subtrees are
// skipped without a walk, which keeps the cost proportional to what was
// written.
func diffOps(a, b map[string]any) []PatchOp {
	return patchOps(diffPointers(a, b, identical))
}

// patchOps are the RFC 6902 operations of changes found with pointers
// (diffPointers, writesWalk).
func patchOps(changes []change) []PatchOp {
	ops := make([]PatchOp, len(changes))
	for i, c := range changes {
		switch {
		case c.del:
			ops[i] = PatchOp{Op: "remove", Path: c.ptr}
		case c.add:
			ops[i] = PatchOp{Op: "add", Path: c.ptr, Value: c.value}
		default:
			ops[i] = PatchOp{Op: "replace", Path: c.ptr, Value: c.value}
		}
	}
	return ops
}

// writtenOps is diffOps(a, b) for b = applyWrites(a, ws) (ws sorted,
// none a prefix of another, all applied): the same operations, found by
// walking only the keys and indices the writes go through. A sibling the
// writes did not touch is the same value in a and b, which diffOps finds
// equal unless it is not equal to itself (a NaN, a Go value that is not
// JSON): a level holding one is diffed whole, as diffOps would.
func writtenOps(a, b map[string]any, ws []*write) []PatchOp {
	d := differ{pointers: true, eq: identical}
	d.stack = d.stackBuf[:0]
	if len(ws) > 0 {
		d.writesWalk(a, b, ws, 0)
	}
	return patchOps(d.out)
}

// writesWalk is walk(old, new) where ws, which share loc[:depth], are
// what made new from old.
func (d *differ) writesWalk(old, new any, ws []*write, depth int) {
	if sameContainer(old, new) {
		return
	}
	switch o := old.(type) {
	case map[string]any:
		n, ok := new.(map[string]any)
		if !ok {
			break
		}
		for _, v := range o {
			if !d.selfEqual(v) {
				d.maps(o, n)
				return
			}
		}
		for rest := ws; len(rest) > 0; {
			var g []*write
			g, rest = nextGroup(rest, depth)
			k := g[0].loc[depth].(string)
			ov, inOld := o[k]
			nv, inNew := n[k]
			d.stack = append(d.stack, diffStep{key: k})
			switch {
			case !inOld && !inNew:
			case !inNew:
				d.emit(change{del: true})
			case !inOld:
				d.emit(change{add: true, value: nv})
			case len(g[0].loc) == depth+1:
				d.walk(ov, nv)
			default:
				d.writesWalk(ov, nv, g, depth+1)
			}
			d.stack = d.stack[:len(d.stack)-1]
		}
		return
	case []any:
		n, ok := new.([]any)
		if !ok || len(n) != len(o) {
			break
		}
		for _, v := range o {
			if !d.selfEqual(v) {
				d.walk(o, n)
				return
			}
		}
		for rest := ws; len(rest) > 0; {
			var g []*write
			g, rest = nextGroup(rest, depth)
			i := g[0].loc[depth].(int)
			d.stack = append(d.stack, diffStep{index: i, isIdx: true})
			if len(g[0].loc) == depth+1 {
				d.walk(o[i], n[i])
			} else {
				d.writesWalk(o[i], n[i], g, depth+1)
			}
			d.stack = d.stack[:len(d.stack)-1]
		}
		return
	}
	d.walk(old, new)
}

// selfEqual reports whether walk(v, v) finds no change: containers never
// differ from themselves (the same map or slice, or empty), a scalar does
// when eq says so (a NaN, a value that is not JSON).
func (d *differ) selfEqual(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return d.eq(v, v)
}

// identical is diffOps' equality of the values diff does not descend
// into (scalars, values of different types, arrays of different lengths).
// Unlike jsonEqual it is exact: json.Number("1") and float64(1) differ, so
// that a write that only re-spells a number still shows up as an
// operation.
func identical(a, b any) bool {
	switch x := a.(type) {
	case *big.Int:
		y, ok := b.(*big.Int)
		return ok && x.Cmp(y) == 0
	case nil, bool, string, json.Number, float64, float32, int, int64, int32, uint64, uint32:
		// Comparable scalars; == also compares their dynamic types.
		return a == b
	}
	return false
}
