package interpreter

import (
	"context"
	"strings"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// podExpr is a jq path that GetGangGroups, PlacePod and PlacePods evaluate
// on every pod: a selector's keyPath or idPath, a member's key or filter.
// Almost all of them are plain paths into the pod's metadata
// (`.metadata.labels["training.kubeflow.org/replica-type"]`), evaluated
// once per pod. Through the evaluator (the direct one included) each was
// a call of its own — the context and deadline checks, the walk from the
// pod's root, the output kept in the call's arena —, a fifth of a 64-pod
// GetGangGroups and most of its allocations (docs/performance.md,
// "GetGangGroups per pod"). So a plain path of object keys is read here in
// place, for the values whose outcome is not in doubt: every step an
// object or null (null's index is null in jq), the value a string or
// null, which every back end returns as it is. Anything else — a number,
// an array or an object as the value, a step into a string or an array,
// any other expression — goes to the evaluator, which gives the result or
// the error exactly as before; so which way a pod took is not observable
// (TestPodExprAgreesWithEvaluators).
type podExpr struct {
	*jqProgram
	// keys are the path's steps when it is a plain path of object keys
	// (.a.b["c"]), nil otherwise.
	keys []string
	// parent numbers keys[:len(keys)-1] among the gang model's paths
	// (.metadata.labels, .metadata.annotations), so that a pod's value
	// there is looked up once per pod (podIn); -1 when it is not cached.
	parent int
	// slot numbers keys among the gang model's plain paths, so that a
	// path several readers share (PyTorchJob's replica-type label, a
	// selector's and a group key's) is read once per pod: its value is
	// kept in podIn.vals[slot]; -1 when it is not kept.
	slot int
}

// newPodExpr compiles text and recognises a plain path of keys.
func newPodExpr(x *exprTable, text string) (*podExpr, error) {
	p, err := x.compile(text)
	if err != nil {
		return nil, err
	}
	pe := &podExpr{jqProgram: p, parent: -1, slot: -1}
	if a, err := x.analysis(text); err == nil {
		pe.keys = plainKeys(a.Query)
	}
	return pe, nil
}

// plainKeys returns the keys of a query that is nothing but object-key
// steps from the input (.a, ."a", .["a"], .a.b["c"]), nil for anything
// else: no `?`, no array index, no iteration, no slice, no computed key.
func plainKeys(q *gojq.Query) []string {
	if q == nil || q.Term == nil || q.Left != nil || q.Right != nil || q.Meta != nil || len(q.Imports) > 0 || len(q.FuncDefs) > 0 || len(q.Patterns) > 0 {
		return nil
	}
	t := q.Term
	if t.Type != gojq.TermTypeIndex {
		return nil
	}
	k, ok := literalKey(t.Index)
	if !ok {
		return nil
	}
	keys := []string{k}
	for _, s := range t.SuffixList {
		if s.Index == nil || s.Iter || s.Optional {
			return nil
		}
		if k, ok = literalKey(s.Index); !ok {
			return nil
		}
		keys = append(keys, k)
	}
	return keys
}

// literalKey is the key of .name, ."name" or .["name"]: a string literal
// without interpolation.
func literalKey(x *gojq.Index) (string, bool) {
	if x == nil || x.IsSlice || x.End != nil {
		return "", false
	}
	if x.Name != "" {
		return x.Name, true
	}
	if x.Str != nil {
		return x.Str.Str, x.Str.Queries == nil
	}
	if x.Start == nil || x.Start.Term == nil || x.Start.Term.Type != gojq.TermTypeString ||
		len(x.Start.Term.SuffixList) > 0 || x.Start.Op != 0 || x.Start.Left != nil || x.Start.Right != nil {
		return "", false
	}
	s := x.Start.Term.Str
	if s == nil || s.Queries != nil {
		return "", false
	}
	return s.Str, true
}

// maxParents is how many parent paths a podIn caches, maxSlots how many
// plain paths' values.
const (
	maxParents = 4
	maxSlots   = 8
)

// podIn is one pod as the gang reads it: the object, its metadata, and
// the values at the parent paths of the podExprs (see podExpr.parent),
// each walked once per pod rather than once per expression. It lives on
// the stack of the call that places the pod.
type podIn struct {
	obj map[string]any
	// metaV is the pod's metadata, meta the same when it is an object
	// (nil otherwise).
	metaV any
	meta  map[string]any
	// name and ns are metadata.name and metadata.namespace when strings,
	// else "".
	name, ns string
	// parents[i] is the value at parent path i once walked (walked[i]):
	// an object, nil, or notPlain.
	parents [maxParents]any
	walked  [maxParents]bool
	// vals[i] is the value of the plain path of slot i once read in
	// place (have's bit i): the built-ins read the same label as a
	// selector and as a group key, or as two components' selectors.
	vals [maxSlots]any
	have uint8
	// evaluated remembers the last evaluator runs by program: Milvus'
	// seven components select their pods with one expression, which is
	// a pure function of the pod, so a pod's candidates evaluate it
	// once, not once each.
	evaluated [2]podRun
	nrun      int
}

// podRun is one program's outputs and error on a pod.
type podRun struct {
	p    *jqProgram
	outs []any
	err  error
}

func newPodIn(pod map[string]any) podIn {
	mv := pod["metadata"]
	meta, _ := mv.(map[string]any)
	name, _ := meta["name"].(string)
	ns, _ := meta["namespace"].(string)
	return podIn{obj: pod, metaV: mv, meta: meta, name: name, ns: ns}
}

// notPlain marks a walk that met something other than an object or null:
// the evaluator decides.
type notPlain struct{}

// walk follows keys from v through objects; null's index is null. Any other
// value on the way gives notPlain{}.
func walk(v any, keys []string) any {
	for _, k := range keys {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case nil:
			return nil
		default:
			return notPlain{}
		}
	}
	return v
}

// indexParents numbers the parent paths of the model's pod expressions,
// the first maxParents distinct ones, and their plain paths, the first
// maxSlots distinct ones, for podIn's caches.
func (g *gangModel) indexParents() {
	ids, slots := map[string]int{}, map[string]int{}
	numberIn := func(ids map[string]int, keys []string, limit int) int {
		key := strings.Join(keys, "\x00")
		id, ok := ids[key]
		if !ok {
			if len(ids) == limit {
				return -1
			}
			id = len(ids)
			ids[key] = id
		}
		return id
	}
	number := func(pe *podExpr) {
		if pe == nil || len(pe.keys) == 0 {
			return
		}
		pe.slot = numberIn(slots, pe.keys, maxSlots)
		if len(pe.keys) > 1 {
			pe.parent = numberIn(ids, pe.keys[:len(pe.keys)-1], maxParents)
		}
	}
	for _, gc := range g.comps {
		number(gc.typeKey)
		number(gc.instanceID)
		number(gc.replicaKey)
	}
	if g.v2 != nil {
		for _, s := range g.v2.subs {
			number(s.repKey)
		}
	}
	for _, d := range g.defs {
		for _, gm := range d.members {
			for _, pe := range gm.keys {
				number(pe)
			}
			for _, pe := range gm.filters {
				number(pe)
			}
		}
	}
}

// read is the plain path's value on the pod when it is a string or null
// and every step was an object or null; ok false leaves it to the
// evaluator.
func (pe *podExpr) read(pod *podIn) (any, bool) {
	n := len(pe.keys)
	if n == 0 {
		return nil, false
	}
	if s := pe.slot; s >= 0 && pod.have&(1<<s) != 0 {
		return pod.vals[s], true
	}
	var v any
	if i := pe.parent; i >= 0 && pod.walked[i] {
		v = pod.parents[i]
	} else {
		// The pod is an object, so a path from .metadata starts at the
		// metadata newPodIn looked up.
		if n > 1 && pe.keys[0] == "metadata" {
			v = walk(pod.metaV, pe.keys[1:n-1])
		} else {
			v = walk(pod.obj, pe.keys[:n-1])
		}
		if i >= 0 {
			pod.parents[i], pod.walked[i] = v, true
		}
	}
	switch x := v.(type) {
	case map[string]any:
		v = x[pe.keys[n-1]]
	case nil:
		return nil, true
	default:
		return nil, false
	}
	switch v.(type) {
	case nil, string:
		if s := pe.slot; s >= 0 {
			pod.vals[s] = v
			pod.have |= 1 << s
		}
		return v, true
	}
	return nil, false
}

// all is the expression's outputs on the pod: the plain path's read in
// one, the evaluator's otherwise. one is the room for the read's single
// output, so that a read allocates nothing.
func (pe *podExpr) all(ctx context.Context, ev evaluator, pod *podIn, one *[1]any) ([]any, error) {
	if v, ok := pe.read(pod); ok {
		one[0] = v
		return one[:], nil
	}
	for i := range pod.evaluated {
		if r := &pod.evaluated[i]; r.p == pe.jqProgram {
			// The evaluator's outputs live as long as the call, and every
			// reader of a pod path only reads them.
			return r.outs, r.err
		}
	}
	outs, err := ev.all(ctx, pe.jqProgram, pod.obj)
	pod.evaluated[pod.nrun%len(pod.evaluated)] = podRun{p: pe.jqProgram, outs: outs, err: err}
	pod.nrun++
	return outs, err
}

// podsGoOn is checked before pod i of a call: the pods' plain paths are
// read without the evaluator, so a long list of pods must still end at the
// call's deadline. On the call's evaluator each pod counts toward its
// clock (a call past the Program's timeout ends with its deadline); on
// the others ctx, which carries the deadline, is checked every clockEvery
// pods.
func podsGoOn(ctx context.Context, ev evaluator, i int) error {
	if d, ok := ev.(*directEvaluator); ok {
		if !d.live(ctx) {
			return d.limit
		}
		return nil
	}
	if i%clockEvery == 0 {
		return ctx.Err()
	}
	return nil
}
