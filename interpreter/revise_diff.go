package interpreter

import (
	"encoding/json"
	"maps"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/kartalua/karta/internal/jsonpatch"
	"github.com/kartalua/karta/object"
)

// change is one difference between two JSON values: a set of value at
// a path (add says the key was missing before), or a delete.
type change struct {
	at []any
	// ptr is at as a JSON pointer, instead of at, from diffPointers.
	ptr   string
	del   bool
	add   bool
	value any
}

// diff appends the changes from old to new at path at (docs/karta.md, "Writes: all or nothing", step 1):
// objects key by key, equal-length arrays element by element, anything
// else (an array whose length changed, a type change, a scalar) as one
// set when eq says the values differ. Untouched subtrees are the same Go
// values on both sides, so they are skipped without a walk; paths are
// built only for the changes found (each change's own slice).
func diff(old, new any, at []any, eq func(a, b any) bool, out []change) []change {
	d := differ{base: at, eq: eq, out: out}
	d.stack = d.stackBuf[:0]
	d.walk(old, new)
	return d.out
}

// differ is one diff: the path below base as a stack of steps, boxed
// into a change's path only when a change is found.
type differ struct {
	// pointers: changes carry ptr rather than at.
	pointers bool
	base     []any
	stack    []diffStep
	stackBuf [16]diffStep
	eq       func(a, b any) bool
	out      []change
	// paths is the storage of the changes' paths (see carve).
	paths []any
}

type diffStep struct {
	key   string
	index int
	isIdx bool
}

func (d *differ) walk(old, new any) {
	if sameContainer(old, new) {
		return
	}
	switch o := old.(type) {
	case map[string]any:
		if n, ok := new.(map[string]any); ok {
			d.maps(o, n)
			return
		}
	case []any:
		if n, ok := new.([]any); ok && len(n) == len(o) {
			for i := range o {
				if d.settled(o[i], n[i]) {
					continue
				}
				d.stack = append(d.stack, diffStep{index: i, isIdx: true})
				d.walk(o[i], n[i])
				d.stack = d.stack[:len(d.stack)-1]
			}
			return
		}
	}
	if !d.eq(old, new) {
		d.emit(change{value: new})
	}
}

// maps diffs two objects in key order, visiting only the keys whose
// values are not settled.
func (d *differ) maps(o, n map[string]any) {
	var buf [32]string
	keys := buf[:0]
	for k, ov := range o {
		if nv, inNew := n[k]; !inNew || !d.settled(ov, nv) {
			keys = append(keys, k)
		}
	}
	for k := range n {
		if _, inOld := o[k]; !inOld {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		ov, inOld := o[k]
		nv, inNew := n[k]
		d.stack = append(d.stack, diffStep{key: k})
		switch {
		case !inNew:
			d.emit(change{del: true})
		case !inOld:
			d.emit(change{add: true, value: nv})
		default:
			d.walk(ov, nv)
		}
		d.stack = d.stack[:len(d.stack)-1]
	}
}

// settled reports values that walk would find no change in: the same
// container, or two scalars eq finds equal.
func (d *differ) settled(a, b any) bool {
	if sameContainer(a, b) {
		return true
	}
	switch a.(type) {
	case map[string]any, []any:
		return false
	}
	switch b.(type) {
	case map[string]any, []any:
		return false
	}
	return d.eq(a, b)
}

// mergeDiff is diff(view, mergePatch(view, patch), nil, jsonEqual, nil)
// without building the merged view: the keys of the patch are walked
// against the view's, and the view's other keys are checked as diff
// checks the values merge patch leaves in place.
func mergeDiff(view, patch map[string]any) []change {
	d := differ{eq: jsonEqual}
	d.stack = d.stackBuf[:0]
	d.mergeWalk(view, patch)
	return d.out
}

// mergeWalk is walk(old, mergePatch(old, patch)).
func (d *differ) mergeWalk(old any, patch map[string]any) {
	o, ok := old.(map[string]any)
	if !ok {
		// The patch replaces old with a new object.
		d.walk(old, mergePatch(old, patch))
		return
	}
	var buf [32]string
	keys := buf[:0]
	for k, ov := range o {
		if _, inPatch := patch[k]; !inPatch && !d.settled(ov, ov) {
			keys = append(keys, k)
		}
	}
	for k := range patch {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		ov, inOld := o[k]
		pv, inPatch := patch[k]
		d.stack = append(d.stack, diffStep{key: k})
		switch {
		case !inPatch:
			d.walk(ov, ov) // left in place
		case pv == nil:
			if inOld {
				d.emit(change{del: true})
			}
		case !inOld:
			d.emit(change{add: true, value: mergePatch(nil, pv)})
		default:
			if pm, isMap := pv.(map[string]any); isMap {
				d.mergeWalk(ov, pm)
			} else {
				d.walk(ov, pv)
			}
		}
		d.stack = d.stack[:len(d.stack)-1]
	}
}

// diffPointers is diff from the root with the changes' paths as JSON
// pointers (change.ptr), for diffOps.
func diffPointers(old, new any, eq func(a, b any) bool) []change {
	d := differ{pointers: true, eq: eq}
	d.stack = d.stackBuf[:0]
	d.walk(old, new)
	return d.out
}

// emit appends c at the current path.
func (d *differ) emit(c change) {
	if d.pointers {
		// As jsonpatch.Pointer renders the path (base is nil here).
		var b strings.Builder
		n := 0
		for _, st := range d.stack {
			n += len(st.key) + 4
		}
		b.Grow(n)
		for _, st := range d.stack {
			b.WriteByte('/')
			if st.isIdx {
				b.WriteString(strconv.Itoa(st.index))
			} else {
				b.WriteString(object.EscapePointerToken(st.key))
			}
		}
		c.ptr = b.String()
		d.out = append(d.out, c)
		return
	}
	at := carve(&d.paths, len(d.base)+len(d.stack))[:len(d.base)+len(d.stack)]
	copy(at, d.base)
	for i, st := range d.stack {
		if st.isIdx {
			at[len(d.base)+i] = st.index
		} else {
			at[len(d.base)+i] = boxKey(st.key)
		}
	}
	c.at = at
	d.out = append(d.out, c)
}

// sameContainer reports whether a and b are the same map, or the same
// slice (same backing array and length). Such values are equal without a
// walk: nothing in the engine mutates a value in place.
func sameContainer(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		// A map value is a pointer; reflect exposes it without copying.
		return ok && x != nil && y != nil && reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer()
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == len(y) && len(x) > 0 && &x[0] == &y[0]
	}
	return false
}

// jsonEqual reports whether two JSON values are equal, numbers by value
// whatever their Go type (1 == 1.0 == json.Number("1") == int64(1)).
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		if sameContainer(x, y) {
			return true
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	na, okA := toNumber(a)
	nb, okB := toNumber(b)
	return okA && okB && na.equal(nb)
}

// number is a JSON number as an exact integer when it is one, else a
// float64.
type number struct {
	isInt bool
	i     int64
	f     float64
}

func (a number) equal(b number) bool {
	if a.isInt && b.isInt {
		return a.i == b.i
	}
	return a.float() == b.float()
}

func (a number) float() float64 {
	if a.isInt {
		return float64(a.i)
	}
	return a.f
}

// toNumber converts the Go number types objects hold.
func toNumber(v any) (number, bool) {
	switch x := v.(type) {
	case int:
		return number{isInt: true, i: int64(x)}, true
	case int64:
		return number{isInt: true, i: x}, true
	case int32:
		return number{isInt: true, i: int64(x)}, true
	case uint64:
		if x <= math.MaxInt64 {
			return number{isInt: true, i: int64(x)}, true
		}
		return number{f: float64(x)}, true
	case float32:
		return floatNumber(float64(x)), true
	case float64:
		return floatNumber(x), true
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return number{isInt: true, i: i}, true
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !isRangeError(err) {
			return number{}, false
		}
		return floatNumber(f), true
	case *big.Int:
		if x.IsInt64() {
			return number{isInt: true, i: x.Int64()}, true
		}
		f, _ := new(big.Float).SetInt(x).Float64()
		return number{f: f}, true
	}
	return number{}, false
}

// floatNumber keeps integral floats exact so that 1.0 equals an int64
// beyond 2^53 only when it truly is that integer.
func floatNumber(f float64) number {
	if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
		return number{isInt: true, i: int64(f)}
	}
	return number{f: f}
}

func isRangeError(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}

// viewPathString renders a view path as users write it:
// spec.containers[0].image, metadata.labels["app.kubernetes.io/name"].
func viewPathString(p []any) string {
	if len(p) == 0 {
		return "."
	}
	var b strings.Builder
	for _, e := range p {
		switch x := e.(type) {
		case string:
			if isIdent(x) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(x)
			} else {
				b.WriteByte('[')
				b.WriteString(strconv.Quote(x))
				b.WriteByte(']')
			}
		case int:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(x))
			b.WriteByte(']')
		}
	}
	return b.String()
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// pointer renders a location as an RFC 6901 JSON pointer.
func pointer(loc []any) string { return jsonpatch.Pointer(loc) }
