package interpreter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kartalua/karta/internal/jqdirect"
	"github.com/kartalua/karta/internal/jqexpr"
	"github.com/kartalua/karta/internal/jqvalue"
	"github.com/kartalua/karta/internal/jqvars"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/luaapi"
)

// References (docs/karta.md, "References"). A Karta names the other
// objects its expressions read ($<name>); Karta fetches nothing itself.
// The caller passes a Resolver with the call's context (WithResolver);
// every hook resolves the Karta's references once, on entry, and binds
// their values for every back end: gojq programs read them from the
// context (jqvars), the direct evaluator from its Scratch
// (callVars): every back end reads the same values.
//
// The resolver travels in the context rather than as a parameter of the
// hooks because the hooks' signatures are shared by every adapter
// (Karmada's interpreter, Argo CD, the webhook, the gang output) that
// calls them with an object and nothing else, and because a resolver is
// request-scoped like the deadline the context already carries: the same
// Program serves callers with different caches, or none.

// MaxReferencedObjects is the most objects one call's references may
// hold in all: a list is cut to what is left of it (with a warning),
// so a label selector that matches thousands of objects cannot make a
// call hold them all.
const MaxReferencedObjects = 256

// ReferenceQuery is one of a Karta's references for one workload, its
// expressions evaluated: what a Resolver looks up.
type ReferenceQuery struct {
	// Reference is the reference's name ($<name> in expressions).
	Reference string
	GVK       schema.GroupVersionKind
	// Shape is "lookup" or "list".
	Shape string
	// Namespace is the objects' namespace, "" for a cluster-scoped kind.
	Namespace string
	// Name is the looked-up object's name (lookup only).
	Name string
	// Selector selects a list's objects by label; nil selects on ownership
	// alone (OwnerUID is then set).
	Selector labels.Selector
	// OwnerUID, when set, keeps only objects with a controller
	// ownerReference of that uid (list with owner: true).
	OwnerUID types.UID
	// Limit is the most objects the call takes; a resolver may stop
	// there (the call cuts the rest anyway).
	Limit int
}

// A Resolver returns the objects a reference points to: at most one for
// a lookup, any number for a list, in a stable order (by namespace and
// name). It must answer from what it holds — a cache, files — and never
// block a hook on the API server: an informer-backed resolver answers
// from its store, and a kind it does not watch yet is absent (and
// starting the watch is its own business, off the call). An object that
// does not exist is no object and no error; an error (forbidden, not
// watched) makes the reference absent for the call, with a warning.
type Resolver interface {
	Resolve(ctx context.Context, q ReferenceQuery, workload *unstructured.Unstructured) ([]*unstructured.Unstructured, error)
}

// ReferenceWarning is a reference that could not be resolved fully: it is
// absent (null, or []) or cut, and the call went on.
type ReferenceWarning struct {
	Karta     string
	Reference string
	Message   string
}

func (w ReferenceWarning) String() string {
	return fmt.Sprintf("karta %q: reference %q: %s", w.Karta, w.Reference, w.Message)
}

type resolverKey struct{}

type resolverValue struct {
	r    Resolver
	warn func(ReferenceWarning)
}

// WithResolver returns ctx carrying r for the hooks called with it, and
// warn (nil: dropped) for the references r could not resolve fully.
// Without a resolver every reference is absent: a lookup null, a list [].
func WithResolver(ctx context.Context, r Resolver, warn func(ReferenceWarning)) context.Context {
	return context.WithValue(ctx, resolverKey{}, resolverValue{r: r, warn: warn})
}

// compiledReference is a reference with its expressions' programs.
type compiledReference struct {
	ref       *karta.Reference
	name, ns  *jqProgram
	selector  *jqProgram
	shapeList bool
}

// compileReferences compiles the references' own expressions (checked
// without variables).
func compileReferences(c *karta.Checked) ([]compiledReference, error) {
	refs := c.Karta.Spec.References
	out := make([]compiledReference, len(refs))
	for i := range refs {
		r := &refs[i]
		cr := compiledReference{ref: r, shapeList: r.List != nil}
		for _, e := range r.Expressions() {
			a := jqexpr.Of(c.ReferenceExpr(e.Expr))
			if a == nil || a.Query == nil {
				return nil, fmt.Errorf("reference %q: jq %q was not checked (a karta bug)", r.Name, e.Expr)
			}
			prog, err := compileAnalysis(a)
			if err != nil {
				return nil, err
			}
			switch e.Field {
			case "name":
				cr.name = prog
			case "namespace":
				cr.ns = prog
			case "labelSelector":
				cr.selector = prog
			}
		}
		out[i] = cr
	}
	return out, nil
}

// bindReferences resolves the Program's references for obj and returns
// ctx carrying their values; ctx itself for a Karta without references.
// A reference that cannot be resolved is absent, with a warning; only
// the call's limits (objects and bytes held) fail the call.
func (p *Program) bindReferences(ctx context.Context, h Hook, obj *unstructured.Unstructured) (context.Context, error) {
	if len(p.refs) == 0 {
		return ctx, nil
	}
	vals, err := p.resolveAll(ctx, h, obj, nil)
	if err != nil {
		return ctx, err
	}
	return jqvars.With(ctx, vals), nil
}

// resolveAll resolves every reference of the Program for obj: their
// values, in order; the objects bound are appended to *resolved when it
// is not nil.
func (p *Program) resolveAll(ctx context.Context, h Hook, obj *unstructured.Unstructured, resolved *[]*unstructured.Unstructured) ([]any, error) {
	rv, _ := ctx.Value(resolverKey{}).(resolverValue)
	b := refBinding{p: p, rv: rv, left: MaxReferencedObjects, bytes: p.limits.MaxMemory, resolved: resolved}
	vals := make([]any, len(p.refs))
	for i := range p.refs {
		v, err := b.resolve(ctx, &p.refs[i], obj)
		if err != nil {
			var le *luaapi.LimitError
			if errors.As(err, &le) {
				le.Karta, le.Hook = p.name, string(h)
			}
			return nil, err
		}
		vals[i] = v
	}
	return vals, nil
}

// callVars are the references' values for a direct call: those the hook
// bound on entry (jqvars), or, for a call that entered through an
// adapter's own entry with none bound, their absent values, as withState
// binds them for the Lua path the direct call stands in for.
func (p *Program) callVars(ctx context.Context) []any {
	if len(p.refs) == 0 {
		return nil
	}
	if vals := jqvars.From(ctx); vals != nil {
		return vals
	}
	return p.absentReferences()
}

// absentReferences are the values of the references when none is
// resolved: null for a lookup, [] for a list.
func (p *Program) absentReferences() []any {
	vals := make([]any, len(p.refs))
	for i, cr := range p.refs {
		if cr.shapeList {
			vals[i] = []any{}
		}
	}
	return vals
}

// refBinding is one call's resolution: what is left of its budgets.
type refBinding struct {
	p     *Program
	rv    resolverValue
	left  int
	bytes int64
	// resolved, when not nil, collects the objects bound
	// (ResolveReferences).
	resolved *[]*unstructured.Unstructured
}

func (b *refBinding) warn(ref, format string, args ...any) {
	if b.rv.warn != nil {
		b.rv.warn(ReferenceWarning{Karta: b.p.name, Reference: ref, Message: fmt.Sprintf(format, args...)})
	}
}

// resolve is one reference's value: the object or null for a lookup,
// the array of objects for a list.
func (b *refBinding) resolve(ctx context.Context, cr *compiledReference, obj *unstructured.Unstructured) (any, error) {
	var absent any // null for a lookup, [] for a list
	if cr.shapeList {
		absent = []any{}
	}
	q, ok := b.query(ctx, cr, obj)
	if !ok {
		return absent, nil
	}
	if b.rv.r == nil {
		b.warn(q.Reference, "no resolver: absent")
		return absent, nil
	}
	objs, err := b.rv.r.Resolve(ctx, q, obj)
	if err != nil {
		b.warn(q.Reference, "absent: %v", err)
		return absent, nil
	}
	if !cr.shapeList {
		if len(objs) == 0 || objs[0] == nil {
			b.warn(q.Reference, "%s %s not found: null", q.GVK.Kind, objectKey(q.Namespace, q.Name))
			return nil, nil
		}
		objs = objs[:1]
	}
	if len(objs) > b.left {
		b.warn(q.Reference, "%d objects, cut to %d (at most %d in all per call)", len(objs), b.left, MaxReferencedObjects)
		objs = objs[:b.left]
	}
	b.left -= len(objs)
	vals := make([]any, 0, len(objs))
	for _, o := range objs {
		if o == nil {
			continue
		}
		if err := b.charge(o); err != nil {
			return nil, err
		}
		if b.resolved != nil {
			*b.resolved = append(*b.resolved, o)
		}
		vals = append(vals, jqvalue.Input(o.Object))
	}
	if !cr.shapeList {
		if len(vals) == 0 { // cut: the call's objects were spent
			return nil, nil
		}
		return vals[0], nil
	}
	return vals, nil
}

// charge counts an object's JSON size against the call's memory limit.
func (b *refBinding) charge(o *unstructured.Unstructured) error {
	if b.bytes <= 0 { // no memory limit
		return nil
	}
	data, err := json.Marshal(o.Object)
	if err != nil {
		return fmt.Errorf("a referenced object: %w", err)
	}
	if b.bytes -= int64(len(data)); b.bytes < 0 {
		return &luaapi.LimitError{Kind: luaapi.KindReferencedBytes, Limit: strconv.FormatInt(b.p.limits.MaxMemory, 10) + " bytes"}
	}
	return nil
}

// query evaluates a reference's expressions on the workload; false when
// they name nothing (a null name or selector), which is an absent
// reference, or fail (warned).
func (b *refBinding) query(ctx context.Context, cr *compiledReference, obj *unstructured.Unstructured) (ReferenceQuery, bool) {
	r := cr.ref
	q := ReferenceQuery{Reference: r.Name, GVK: r.Kind.GVK(), Shape: r.Shape(), Limit: b.left}
	ev := refEvaluator{obj: obj.Object}
	defer ev.s.Release()
	if !r.IsCluster() {
		q.Namespace = obj.GetNamespace()
	}
	str := func(p *jqProgram, what string) (string, bool) {
		outs, err := ev.all(ctx, p)
		if err != nil {
			b.warn(r.Name, "%s: %v", what, err)
			return "", false
		}
		if len(outs) == 0 || outs[0] == nil {
			return "", false
		}
		s, ok := outs[0].(string)
		if !ok || s == "" {
			b.warn(r.Name, "%s is %s, not a name", what, describe(outs[0]))
			return "", false
		}
		return s, true
	}
	if cr.ns != nil {
		ns, ok := str(cr.ns, "lookup.namespace")
		if !ok {
			return q, false
		}
		q.Namespace = ns
	}
	if cr.name != nil {
		name, ok := str(cr.name, "lookup.name")
		if !ok {
			return q, false
		}
		q.Name = name
		return q, true
	}
	if cr.selector != nil {
		outs, err := ev.all(ctx, cr.selector)
		if err != nil {
			b.warn(r.Name, "list.labelSelector: %v", err)
			return q, false
		}
		if len(outs) == 0 || outs[0] == nil {
			return q, false
		}
		sel, err := labelSelector(outs[0])
		if err != nil {
			b.warn(r.Name, "list.labelSelector: %v", err)
			return q, false
		}
		q.Selector = sel
	}
	if r.List != nil && r.List.Owner {
		if q.OwnerUID = obj.GetUID(); q.OwnerUID == "" {
			b.warn(r.Name, "list.owner: the workload has no uid")
			return q, false
		}
	}
	return q, true
}

// refEvaluator evaluates a reference's expressions on the workload: on
// the direct back end (the object in place, as the hooks' plans read it),
// and on gojq over the normalized object when the direct form declines or
// is missing, which gives the value or the error exactly. Every hook
// resolves the references on entry, so this runs on every call of a Karta
// with references: normalizing the whole object for gojq each time was
// most of a fast hook's cost. Its outputs alias the Scratch's arena until
// s.Release.
type refEvaluator struct {
	obj map[string]any
	in  any // the normalized object, made on the first gojq evaluation
	s   jqdirect.Scratch
}

func (e *refEvaluator) all(ctx context.Context, p *jqProgram) ([]any, error) {
	if p.direct != nil {
		if outs, ok := p.direct.Run(e.obj, &e.s); ok {
			return outs, nil
		}
	}
	if e.in == nil {
		e.in = jqvalue.Input(e.obj)
	}
	return p.all(ctx, e.in)
}

func objectKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
