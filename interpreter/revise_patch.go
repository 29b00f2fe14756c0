package interpreter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// PatchType is how a revision's patch applies to the PodTemplateSpec view,
// as kubectl patch --type has it.
type PatchType string

const (
	// PatchMerge is an RFC 7386 JSON merge patch: objects merge key by
	// key, null removes, and anything else — lists included — replaces.
	// It is the type of a revision that does not say.
	PatchMerge PatchType = "merge"
	// PatchStrategic is a Kubernetes strategic merge patch with core/v1
	// PodTemplateSpec's patch strategies: containers, init containers,
	// env, volumes and ports merge by their keys, and the $patch,
	// $retainKeys, $setElementOrder and $deleteFromPrimitiveList
	// directives apply.
	PatchStrategic PatchType = "strategic"
	// PatchJSON is an RFC 6902 JSON Patch: a list of operations whose
	// paths are JSON pointers into the view (/spec/containers/0/image).
	PatchJSON PatchType = "json"
)

// patchTypes lists the patch types, the default first.
var patchTypes = []PatchType{PatchMerge, PatchStrategic, PatchJSON}

// ParsePatchType returns the patch type named s; "" is PatchMerge.
func ParsePatchType(s string) (PatchType, error) {
	if s == "" {
		return PatchMerge, nil
	}
	for _, t := range patchTypes {
		if string(t) == s {
			return t, nil
		}
	}
	return "", fmt.Errorf("unknown patch type %q (want merge, strategic or json)", s)
}

// preparedPatch is a revision's patch checked against its type.
type preparedPatch struct {
	typ PatchType
	// obj is the patch of a merge or strategic revision.
	obj map[string]any
	// ops are the operations of a json revision.
	ops []jsonOp
}

// jsonOp is one checked RFC 6902 operation.
type jsonOp struct {
	op, path, from string
	// raw is the operation as given, passed to the JSON Patch library.
	raw map[string]any
}

// The RFC 6902 operations.
var jsonOps = map[string]bool{"add": true, "remove": true, "replace": true, "move": true, "copy": true, "test": true}

// preparePatch checks a revision's type and the shape of its patch. Its
// errors begin with the field they are about: type, patch, patch[1].op.
func preparePatch(rev *Revision) (preparedPatch, error) {
	t, err := ParsePatchType(string(rev.Type))
	if err != nil {
		return preparedPatch{}, fmt.Errorf("type: %w", err)
	}
	pp := preparedPatch{typ: t}
	if t != PatchJSON {
		obj, ok := rev.Patch.(map[string]any)
		if !ok {
			what := "a JSON merge patch"
			if t == PatchStrategic {
				what = "a strategic merge patch"
			}
			return pp, fmt.Errorf("patch must be an object: %s over the PodTemplateSpec view, got %s", what, describeValue(rev.Patch))
		}
		pp.obj = obj
		return pp, nil
	}
	var list []any
	switch x := rev.Patch.(type) {
	case []any:
		list = x
	case []map[string]any:
		list = make([]any, len(x))
		for i, m := range x {
			list[i] = m
		}
	case map[string]any:
		// An empty Lua table reaches Go as an empty object.
		if len(x) != 0 {
			return pp, fmt.Errorf("patch must be a list of JSON Patch (RFC 6902) operations over the PodTemplateSpec view, got an object")
		}
	default:
		return pp, fmt.Errorf("patch must be a list of JSON Patch (RFC 6902) operations over the PodTemplateSpec view, got %s", describeValue(rev.Patch))
	}
	pp.ops = make([]jsonOp, len(list))
	for i, e := range list {
		op, err := checkJSONOp(e)
		if err != nil {
			return pp, fmt.Errorf("patch[%d]%w", i, err)
		}
		pp.ops[i] = op
	}
	return pp, nil
}

// checkJSONOp checks one operation; its errors begin with the rest of the
// field path (".op: ..." or " must be ...").
func checkJSONOp(e any) (jsonOp, error) {
	m, ok := e.(map[string]any)
	if !ok {
		return jsonOp{}, fmt.Errorf(" must be an operation {op, path, value, from}, got %s", describeValue(e))
	}
	op, ok := m["op"].(string)
	switch {
	case !ok:
		return jsonOp{}, fmt.Errorf(".op: required: add, remove, replace, move, copy or test")
	case !jsonOps[op]:
		return jsonOp{}, fmt.Errorf(".op: unknown operation %q (want add, remove, replace, move, copy or test)", op)
	}
	out := jsonOp{op: op, raw: m}
	var err error
	if out.path, err = pointerField(m, "path"); err != nil {
		return jsonOp{}, err
	}
	switch op {
	case "move", "copy":
		if out.from, err = pointerField(m, "from"); err != nil {
			return jsonOp{}, err
		}
	case "add", "replace", "test":
		if _, ok := m["value"]; !ok {
			return jsonOp{}, fmt.Errorf(".value: required for %s", op)
		}
	}
	return out, nil
}

// pointerField reads an operation's path or from: an RFC 6901 pointer.
func pointerField(m map[string]any, field string) (string, error) {
	p, ok := m[field].(string)
	if !ok {
		return "", fmt.Errorf(".%s: required: a JSON pointer into the PodTemplateSpec view, e.g. /spec/containers/0/image", field)
	}
	if _, err := pointerTokens(p); err != nil {
		return "", fmt.Errorf(".%s: %w", field, err)
	}
	return p, nil
}

// pointerTokens splits an RFC 6901 pointer into its unescaped tokens.
func pointerTokens(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("%q is not a JSON pointer: it must be empty or start with /", p)
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || (t[j+1] != '0' && t[j+1] != '1')) {
				return nil, fmt.Errorf("%q is not a JSON pointer: ~ must be followed by 0 or 1", p)
			}
		}
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}

// tokensViewPath turns pointer tokens into a view path: tokens that are
// array indices become ints, so that the path prints as users write it.
func tokensViewPath(toks []string) []any {
	out := make([]any, len(toks))
	for i, t := range toks {
		if n, err := strconv.Atoi(t); err == nil && n >= 0 && strconv.Itoa(n) == t {
			out[i] = n
		} else {
			out[i] = t
		}
	}
	return out
}

// describeValue is describe for a patch: Go callers may pass any value.
func describeValue(v any) string {
	switch v.(type) {
	case nil, bool, string, map[string]any, []any:
		return describe(v)
	}
	if _, ok := toNumber(v); ok {
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}

// checkPatchReach reports every part of a patch outside the component's
// view nodes: for merge and strategic patches the fields (directives
// aside), for a json patch the paths an operation writes.
func (cm *compModel) checkPatchReach(pp preparedPatch) []error {
	if pp.typ != PatchJSON {
		return cm.checkReach(pp.obj, nil, pp.typ == PatchStrategic, nil)
	}
	var errs []error
	for i, op := range pp.ops {
		fields := []string{"path"}
		if op.op == "move" {
			fields = append(fields, "from") // move removes what it reads
		}
		for _, f := range fields {
			p := op.path
			if f == "from" {
				p = op.from
			}
			toks, _ := pointerTokens(p) // checked by preparePatch
			at := tokensViewPath(toks)
			if !cm.reaches(at) {
				errs = append(errs, fmt.Errorf("patch[%d].%s: %w", i, f, &UnreachableError{Component: cm.c.Name, Path: viewPathString(at)}))
			}
		}
	}
	return errs
}

// reaches reports whether a view path is a node, below one, or an
// ancestor of one.
func (cm *compModel) reaches(at []any) bool {
	at = stringPath(at)
	return cm.nodeFor(at) != nil || cm.above(at)
}

// stringPath spells a path's int steps as strings, as node paths do not
// hold indices: only the prefix that names nodes matters.
func stringPath(at []any) []any {
	out := make([]any, len(at))
	for i, s := range at {
		if n, ok := s.(int); ok {
			out[i] = strconv.Itoa(n)
		} else {
			out[i] = s
		}
	}
	return out
}

// patchView applies a prepared patch to an instance's view and returns
// the patched view. Neither is modified; the result shares with view
// every subtree the patch left equal.
func patchView(pp preparedPatch, view map[string]any) (map[string]any, error) {
	switch pp.typ {
	case PatchStrategic:
		return strategicPatchView(view, pp.obj)
	case PatchJSON:
		return jsonPatchView(view, pp.ops)
	}
	out, _ := mergePatch(view, pp.obj).(map[string]any)
	return out, nil
}

// patchInstanceView is patchView for an instance's view; fv is how a
// fragmented view was built (nil for the other styles). For a strategic
// patch, the main container of a fragmented view stays first.
func (cm *compModel) patchInstanceView(pp preparedPatch, view map[string]any, fv *fragView) (map[string]any, error) {
	main := pp.typ == PatchStrategic && fv != nil && fv.hasMain
	if main {
		if err := cm.checkStrategicMain(fv, pp.obj); err != nil {
			return nil, err
		}
	}
	patched, err := patchView(pp, view)
	if err != nil {
		return nil, err
	}
	if main {
		if err := cm.keepMainFirst(fv, patched); err != nil {
			return nil, err
		}
	}
	return patched, nil
}

// podTemplateMeta is core/v1 PodTemplateSpec's strategic merge patch
// metadata (patch strategies and merge keys), read from its struct tags.
var podTemplateMeta = sync.OnceValues(func() (strategicpatch.LookupPatchMeta, error) {
	return strategicpatch.NewPatchMetaFromStruct(corev1.PodTemplateSpec{})
})

// strategicPatchView applies a strategic merge patch with apimachinery's
// implementation, on copies: it modifies both of its arguments.
func strategicPatchView(view, patch map[string]any) (out map[string]any, err error) {
	meta, err := podTemplateMeta()
	if err != nil {
		return nil, fmt.Errorf("the PodTemplateSpec patch metadata: %w", err)
	}
	if err := checkStrategic(patch, nil, meta); err != nil {
		return nil, err
	}
	orig := deepCopyJSON(view).(map[string]any)
	p := deepCopyJSON(patch).(map[string]any)
	alignMergeKeys(orig, p, meta)
	defer func() {
		// The library asserts types it has not always checked; a patch
		// is input, and must not take the process down.
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("strategic merge patch: %v", r)
		}
	}()
	res, err := strategicpatch.StrategicMergeMapPatchUsingLookupPatchMeta(orig, p, meta)
	if err != nil {
		return nil, fmt.Errorf("strategic merge patch: %w", err)
	}
	// res is a strategicpatch.JSONMap: a named type a type switch on
	// map[string]any does not match.
	shared, _ := reuseEqual(view, map[string]any(res))
	return shared.(map[string]any), nil
}

// The strategic merge patch directives.
const (
	directivePatch      = "$patch"
	directiveRetainKeys = "$retainKeys"
	prefixSetOrder      = "$setElementOrder/"
	prefixDeleteFrom    = "$deleteFromPrimitiveList/"
)

// checkStrategic reports the first problem of a strategic merge patch
// that apimachinery would report without saying where: an unknown
// directive, a $patch value it does not take, an element of a list merged
// by key that lacks the key. at is the view path of patch.
func checkStrategic(patch map[string]any, at []any, meta strategicpatch.LookupPatchMeta) error {
	for _, k := range sortedKeys(patch) {
		v := patch[k]
		p := appendPath(at, k)
		if strings.HasPrefix(k, "$") {
			if err := checkDirective(k, v, at); err != nil {
				return err
			}
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			var sub strategicpatch.LookupPatchMeta
			if meta != nil {
				if s, _, err := meta.LookupPatchMetadataForStruct(k); err == nil {
					sub = s
				}
			}
			if err := checkStrategic(x, p, sub); err != nil {
				return err
			}
		case []any:
			if meta == nil {
				continue
			}
			sub, pm, err := meta.LookupPatchMetadataForSlice(k)
			key := pm.GetPatchMergeKey()
			if err != nil || !mergesByKey(pm) || key == "" {
				continue
			}
			for i, e := range x {
				ep := appendPath(p, i)
				m, ok := e.(map[string]any)
				if !ok {
					return fmt.Errorf("%s: the elements of %s merge by their %q, so each must be an object, not %s", viewPathString(ep), viewPathString(p), key, describeValue(e))
				}
				if d, ok := m[directivePatch]; ok {
					if d != "delete" && d != "replace" {
						return fmt.Errorf("%s.$patch: %s is not a list element directive (want delete or replace)", viewPathString(ep), describeValue(d))
					}
					if d == "delete" {
						if _, ok := m[key]; !ok {
							return fmt.Errorf("%s: $patch: delete needs the %q of the element to delete", viewPathString(ep), key)
						}
					}
					continue
				}
				if _, ok := m[key]; !ok {
					return fmt.Errorf("%s: no %q: the elements of %s merge by their %q", viewPathString(ep), key, viewPathString(p), key)
				}
				if err := checkStrategic(m, ep, sub); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// checkDirective checks a directive k of the object at view path at.
func checkDirective(k string, v any, at []any) error {
	where := k
	if len(at) > 0 {
		where = viewPathString(at) + "." + k
	}
	switch {
	case k == directivePatch:
		if v != "replace" && v != "delete" {
			return fmt.Errorf("%s: %s is not an object directive (want replace or delete)", where, describeValue(v))
		}
	case k == directiveRetainKeys:
		if _, ok := v.([]any); !ok {
			return fmt.Errorf("%s: must be a list of field names, not %s", where, describeValue(v))
		}
	case strings.HasPrefix(k, prefixSetOrder), strings.HasPrefix(k, prefixDeleteFrom):
		if _, ok := v.([]any); !ok {
			return fmt.Errorf("%s: must be a list, not %s", where, describeValue(v))
		}
	default:
		return fmt.Errorf("%s: unknown directive (want $patch, $retainKeys, $setElementOrder/FIELD or $deleteFromPrimitiveList/FIELD)", where)
	}
	return nil
}

// mergesByKey reports whether a list field's patch strategy merges its
// elements: by its merge key, or as a set of scalars when it has none.
func mergesByKey(pm strategicpatch.PatchMeta) bool {
	for _, s := range pm.GetPatchStrategies() {
		if s == "merge" {
			return true
		}
	}
	return false
}

// alignMergeKeys makes a patch's merge key values the view's own Go values
// where they are equal JSON numbers: apimachinery compares merge keys with
// ==, so containerPort 8080 as json.Number would miss the int64 8080 of
// an object built in Go (and append a second port).
func alignMergeKeys(view, patch map[string]any, meta strategicpatch.LookupPatchMeta) {
	for k, pv := range patch {
		vv, ok := view[k]
		if !ok || strings.HasPrefix(k, "$") {
			continue
		}
		switch x := pv.(type) {
		case map[string]any:
			vm, ok := vv.(map[string]any)
			if !ok {
				continue
			}
			if sub, _, err := meta.LookupPatchMetadataForStruct(k); err == nil {
				alignMergeKeys(vm, x, sub)
			}
		case []any:
			vl, ok := vv.([]any)
			if !ok {
				continue
			}
			sub, pm, err := meta.LookupPatchMetadataForSlice(k)
			key := pm.GetPatchMergeKey()
			if err != nil || key == "" {
				continue
			}
			lists := [][]any{x}
			if order, ok := patch[prefixSetOrder+k].([]any); ok {
				lists = append(lists, order)
			}
			for _, list := range lists {
				for _, e := range list {
					pm, ok := e.(map[string]any)
					if !ok {
						continue
					}
					if vm := findByKey(vl, key, pm[key]); vm != nil {
						pm[key] = vm[key]
						alignMergeKeys(vm, pm, sub)
					}
				}
			}
		}
	}
}

// findByKey returns the element of list whose key equals v, or nil.
func findByKey(list []any, key string, v any) map[string]any {
	if v == nil {
		return nil
	}
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			if w, ok := m[key]; ok && jsonEqual(v, w) {
				return m
			}
		}
	}
	return nil
}

// maxJSONPatchCopy bounds what copy operations may add to a view: a few
// copies of a copy would otherwise double it each time.
const maxJSONPatchCopy = 1 << 20

// jsonPatchView applies RFC 6902 operations with the evanphx/json-patch
// library. Array indices are RFC 6901's (no negative ones), and add does
// not create missing parents, as the API server applies a JSON Patch. On
// an error, the failing operation is found by applying prefixes of the
// patch (a binary search, so that a long patch costs a few applications,
// not one per operation), and named.
func jsonPatchView(view map[string]any, ops []jsonOp) (map[string]any, error) {
	doc, err := json.Marshal(view)
	if err != nil {
		return nil, fmt.Errorf("the view does not encode as JSON: %w", err)
	}
	raws := make([]any, len(ops))
	for i, op := range ops {
		raws[i] = op.raw
	}
	raw, err := json.Marshal(raws)
	if err != nil {
		return nil, fmt.Errorf("patch: %w", err)
	}
	p, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil, fmt.Errorf("patch: %w", err)
	}
	opts := jsonpatch.NewApplyOptions()
	opts.SupportNegativeIndices = false
	opts.AccumulatedCopySizeLimit = maxJSONPatchCopy
	opts.EscapeHTML = false
	out, err := p.ApplyWithOptions(doc, opts)
	if err != nil {
		// p[:lo] applies, p[:hi] fails with err.
		lo, hi := 0, len(p)
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if _, e := p[:mid].ApplyWithOptions(doc, opts); e != nil {
				hi, err = mid, e
			} else {
				lo = mid
			}
		}
		op := ops[hi-1]
		return nil, fmt.Errorf("patch[%d] (%s %s): %w", hi-1, op.op, opDisplayPath(op.path), err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var res any
	if err := dec.Decode(&res); err != nil {
		return nil, fmt.Errorf("the patched view: %w", err)
	}
	m, ok := res.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the patch makes the view %s, not an object", describe(res))
	}
	shared, _ := reuseEqual(view, m)
	return shared.(map[string]any), nil
}

func opDisplayPath(p string) string {
	if p == "" {
		return `""`
	}
	return p
}

// reuseEqual returns new with every subtree that equals (as JSON) the one
// at the same place in old replaced by old's own value, and whether new
// as a whole is old. A patched copy thus shares what did not change: the
// object's own values and number spellings stay, and diff skips them.
func reuseEqual(old, new any) (any, bool) {
	switch n := new.(type) {
	case map[string]any:
		o, ok := old.(map[string]any)
		if !ok {
			return new, false
		}
		same := len(o) == len(n)
		for k, nv := range n {
			ov, ok := o[k]
			if !ok {
				same = false
				continue
			}
			r, s := reuseEqual(ov, nv)
			n[k] = r
			same = same && s
		}
		if same && o != nil {
			return old, true
		}
		return n, false
	case []any:
		o, ok := old.([]any)
		if !ok {
			return new, false
		}
		same := len(o) == len(n)
		for i := range min(len(o), len(n)) {
			r, s := reuseEqual(o[i], n[i])
			n[i] = r
			same = same && s
		}
		if same && o != nil {
			return old, true
		}
		return n, false
	}
	switch old.(type) {
	case map[string]any, []any:
		return new, false
	}
	if jsonEqual(old, new) {
		return old, true
	}
	return new, false
}

// checkStrategicMain refuses a strategic patch of spec.containers when the
// main container of a fragmented view has no name: the patch finds
// containers by name, and apimachinery would fail on it without saying
// why.
func (cm *compModel) checkStrategicMain(fv *fragView, patch map[string]any) error {
	if _, named := fv.main["name"]; named {
		return nil
	}
	spec, _ := patch["spec"].(map[string]any)
	if spec == nil {
		return nil
	}
	for k := range spec {
		if k == "containers" || k == prefixSetOrder+"containers" {
			return fmt.Errorf("spec.containers: a strategic merge patch finds containers by name, and the main container of component %q has none: "+
				"change it by position with type: json (/spec/containers/0/...) or with a merge patch", cm.c.Name)
		}
	}
	return nil
}

// keepMainFirst puts the main container of a fragmented view back first
// in spec.containers after a strategic merge patch, which places the
// containers a patch adds before those it does not name (as kubectl
// does): in a fragmented view, the first container is the main one. A
// patch that deleted the main container is refused.
func (cm *compModel) keepMainFirst(fv *fragView, patched map[string]any) error {
	name, named := fv.main["name"]
	if !named {
		return nil // checkStrategicMain let no patch of spec.containers through
	}
	spec, _ := patched["spec"].(map[string]any)
	list, _ := spec["containers"].([]any)
	for i, e := range list {
		m, _ := e.(map[string]any)
		if n, ok := m["name"]; !ok || !jsonEqual(n, name) {
			continue
		}
		if i > 0 {
			// The list and spec are the patch's own (they changed).
			moved := make([]any, 0, len(list))
			moved = append(append(append(moved, e), list[:i]...), list[i+1:]...)
			spec["containers"] = moved
		}
		return nil
	}
	return fmt.Errorf("spec.containers[%s] is the main container and cannot be removed through component %q", mergeKeyString(name), cm.c.Name)
}
