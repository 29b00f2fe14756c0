package interpreter

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// write is one located write (docs/karta.md, "Writes: all or nothing"): set value at loc, or delete it.
type write struct {
	src WriteRef
	// viewAt, when not nil, is the view path of a revision's change,
	// rendered into src.ViewPath only when an error names the write.
	viewAt []any
	loc    []any // string keys and int indices, resolved (see resolveLoc)
	del    bool
	value  any
}

// ref is the write's source, with its view path.
func (w *write) ref() WriteRef {
	r := w.src
	if w.viewAt != nil {
		r.ViewPath = viewPathString(w.viewAt)
	}
	return r
}

// locator evaluates the path() locations of component paths on the
// object, once per path and call.
type locator struct {
	ctx context.Context
	obj any // jq input, or the object itself with dev
	// dev, when not nil, is the call's evaluator (see revise): locations
	// are evaluated on the object in place, and on gojq, metered by dev,
	// where the direct form declines.
	dev   *directEvaluator
	cache map[*jqPath]locResult
}

type locResult struct {
	locs [][]any
	err  error
}

// locations returns the location of every instance of c through p, by
// instance position.
func (l *locator) locations(c *compModel, p *jqPath, insts []instance) ([][]any, error) {
	if r, ok := l.cache[p]; ok {
		return r.locs, r.err
	}
	locs, err := l.eval(c, p, insts)
	l.cache[p] = locResult{locs, err}
	return locs, err
}

func (l *locator) eval(c *compModel, p *jqPath, insts []instance) ([][]any, error) {
	if p.notAssignable != "" {
		return nil, &PathError{Component: c.c.Name, Field: p.field, Expr: p.expr, Reason: p.notAssignable}
	}
	if l.dev != nil {
		if locs, ok := l.evalDirect(p, insts); ok {
			return locs, nil
		}
	}
	outs, err := l.pathOutputs(p)
	if err != nil {
		return nil, pathFailure(c, p, err)
	}
	if len(outs) != len(insts) {
		ids := make([]string, len(insts))
		for i := range insts {
			ids[i] = insts[i].id
		}
		return nil, zipError(c.c.Name, p.field, len(outs), ids)
	}
	locs := make([][]any, len(outs))
	for i, o := range outs {
		// path() yields arrays; anything else would be a gojq bug.
		arr, ok := o.([]any)
		if !ok {
			return nil, &PathError{Component: c.c.Name, Field: p.field, Expr: p.expr,
				Err: fmt.Errorf("path() yielded %s, not an array", describe(o))}
		}
		locs[i] = arr
	}
	return locs, nil
}

// evalDirect is eval with jqdirect's Paths on the object in place; ok is
// false when it declines, or finds other than one location per instance
// (eval's gojq run reports it).
func (l *locator) evalDirect(p *jqPath, insts []instance) ([][]any, bool) {
	d := p.value.direct
	if d == nil || l.dev.exactOnly || !l.dev.live(l.ctx) {
		return nil, false
	}
	locs, _, ok := d.Paths(l.obj, &l.dev.s)
	if !ok || len(locs) != len(insts) {
		return nil, false
	}
	return locs, true
}

// pathOutputs are the outputs of p's path() program: on the jq input
// l.obj, or with dev on the object's jq value, metered by dev.
func (l *locator) pathOutputs(p *jqPath) ([]any, error) {
	prog, err := p.pathProgram()
	if err != nil {
		return nil, err
	}
	if l.dev == nil {
		return prog.all(l.ctx, l.obj)
	}
	l.dev.declined = true
	return l.dev.gojq(prog, l.obj)
}

// pathFailure is the error of a failing path() (docs/karta.md, "Writes: all or nothing", step 2).
func pathFailure(c *compModel, p *jqPath, err error) error {
	var jqErr *JQError
	if errors.As(err, &jqErr) {
		err = jqErr.Err // the PathError names the expression already
	}
	return &PathError{Component: c.c.Name, Field: p.field, Expr: p.expr, Err: err}
}

// resolveLoc turns a path() location plus view steps into plain keys and
// non-negative indices against obj: a negative index counts from the end
// of its array, and a slice step followed by an index is the index into
// the array. A write to a whole slice has no leaf meaning and is an error.
func resolveLoc(obj any, loc []any) ([]any, error) {
	arena := make([]any, 0, len(loc))
	return resolveLocRest(&arena, obj, loc, nil)
}

// carve returns an empty slice with room for n elements from arena, a
// chunk of a call's storage; no two carved slices overlap, and arena's
// chunks are never reused.
func carve(arena *[]any, n int) []any {
	if cap(*arena)-len(*arena) < n {
		*arena = make([]any, 0, max(32, n))
	}
	start := len(*arena)
	*arena = (*arena)[:start+n]
	return (*arena)[start : start : start+n]
}

// resolveLocRest is resolveLoc of loc + rest, without joining them first;
// the result's storage is carved from arena.
func resolveLocRest(arena *[]any, obj any, loc, rest []any) ([]any, error) {
	n := len(loc) + len(rest)
	at := func(i int) any {
		if i < len(loc) {
			return loc[i]
		}
		return rest[i-len(loc)]
	}
	out := carve(arena, n)
	cur := obj
	for i := 0; i < n; i++ {
		step := at(i)
		switch e := step.(type) {
		case string:
			out = append(out, step)
			m, _ := cur.(map[string]any)
			cur = m[e]
		case int, float64:
			idx, err := arrayIndex(cur, e, out)
			if err != nil {
				return nil, err
			}
			if x, isInt := step.(int); isInt && x == idx {
				out = append(out, step) // already boxed
			} else {
				out = append(out, idx)
			}
			cur = elem(cur, idx)
		case map[string]any:
			arr, _ := cur.([]any)
			start, end := sliceBounds(e, len(arr))
			if i+1 == n {
				return nil, fmt.Errorf("%s: a slice is not a writable location", pointer(out))
			}
			j, ok := at(i + 1).(int)
			if !ok || j < 0 || start+j >= end {
				return nil, fmt.Errorf("%s: index %v is outside the slice [%d:%d]", pointer(out), at(i+1), start, end)
			}
			i++
			out = append(out, start+j)
			cur = elem(cur, start+j)
		default:
			return nil, fmt.Errorf("%s: unexpected path element %s", pointer(out), describe(e))
		}
	}
	return out, nil
}

// arrayIndex resolves one index step as jq does: floats truncate toward
// minus infinity, negatives count from the end. out is the location so
// far, rendered only into an error.
func arrayIndex(cur any, e any, out []any) (int, error) {
	var idx int
	switch x := e.(type) {
	case int:
		idx = x
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > math.MaxInt32 {
			return 0, fmt.Errorf("%s: index %v is out of range", pointer(out), x)
		}
		idx = int(math.Floor(x))
	}
	if idx < 0 {
		arr, _ := cur.([]any)
		if idx += len(arr); idx < 0 {
			return 0, fmt.Errorf("%s: index %v is out of range", pointer(out), e)
		}
	}
	return idx, nil
}

func elem(cur any, i int) any {
	if arr, ok := cur.([]any); ok && i < len(arr) {
		return arr[i]
	}
	return nil
}

// sliceBounds clamps jq's {start, end} to [0, n].
func sliceBounds(s map[string]any, n int) (int, int) {
	bound := func(v any, def int) int {
		var i int
		switch x := v.(type) {
		case int:
			i = x
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return def
			}
			i = int(math.Floor(max(min(x, math.MaxInt32), math.MinInt32)))
		default:
			return def
		}
		if i < 0 {
			i += n
		}
		return max(0, min(i, n))
	}
	start := bound(s["start"], 0)
	return start, max(start, bound(s["end"], n))
}
