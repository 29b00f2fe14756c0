package interpreter

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// ReviseWarning is a revision that applies, but probably not as its author
// meant: a merge patch that replaces a non-empty list whose elements a
// strategic merge patch would merge by key, dropping what the patch's
// elements do not repeat.
type ReviseWarning struct {
	// Revision is the index in the revision list.
	Revision  int
	Component string
	Instance  string
	// Path is the view path of what is dropped from: a list element named
	// by its merge key, spec.containers[pytorch], or a list of scalars.
	Path string
	// Dropped names what goes: the element's fields (args,
	// resources.requests, env[HF_HOME]), or the values of a list of
	// scalars; empty when the element goes whole.
	Dropped []string
	// MergeKey is the key a strategic merge patch would merge the list's
	// elements by ("" for a list of scalars).
	MergeKey string
}

// Where names the revision and the place: revisions[0] (component
// "worker", instance "") spec.containers[pytorch].
func (w ReviseWarning) Where() string {
	return fmt.Sprintf("revisions[%d] (component %q, instance %q): %s", w.Revision, w.Component, w.Instance, w.Path)
}

// Message says what is dropped and what to do instead.
func (w ReviseWarning) Message() string {
	dropped := "the whole element"
	if len(w.Dropped) > 0 {
		dropped = strings.Join(w.Dropped, ", ")
	}
	by := "merge the values"
	if w.MergeKey != "" {
		by = "merge by " + w.MergeKey
	}
	return fmt.Sprintf("a merge patch replaces the whole list, dropping %s; use type: strategic to %s", dropped, by)
}

func (w ReviseWarning) String() string { return w.Where() + ": " + w.Message() }

// mergeWarnings returns the warnings of a merge patch over a view: one for
// each element of a replaced list (with a merge strategy in core/v1) that
// loses fields or goes whole. src names the revision; warnings carry it.
func mergeWarnings(view, patch map[string]any, src WriteRef) []ReviseWarning {
	if !hasList(patch) {
		// Only a list in the patch replaces one.
		return nil
	}
	meta, err := podTemplateMeta()
	if err != nil {
		return nil
	}
	w := &warner{src: src}
	w.object(view, patch, nil, meta)
	return w.out
}

type warner struct {
	src WriteRef
	out []ReviseWarning
}

func (w *warner) add(path string, dropped []string, key string) {
	w.out = append(w.out, ReviseWarning{Revision: w.src.Revision, Component: w.src.Component, Instance: w.src.Instance,
		Path: path, Dropped: dropped, MergeKey: key})
}

// object walks a merge patch object over the view value it merges into.
func (w *warner) object(view, patch map[string]any, at []any, meta strategicpatch.LookupPatchMeta) {
	for _, k := range sortedKeys(patch) {
		p := appendPath(at, k)
		switch x := patch[k].(type) {
		case map[string]any:
			vm, _ := view[k].(map[string]any)
			if sub, _, err := meta.LookupPatchMetadataForStruct(k); err == nil && vm != nil {
				w.object(vm, x, p, sub)
			}
		case []any:
			old, _ := view[k].([]any)
			if len(old) == 0 {
				continue
			}
			sub, pm, err := meta.LookupPatchMetadataForSlice(k)
			if err != nil || !mergesByKey(pm) {
				continue
			}
			w.list(old, x, p, sub, pm.GetPatchMergeKey())
		}
	}
}

// list compares a replaced list with its replacement, element by element
// through the merge key (by position for elements without one, as the
// nameless main container of a fragmented view).
func (w *warner) list(old, new []any, at []any, meta strategicpatch.LookupPatchMeta, key string) {
	if key == "" {
		var dropped []string
		for _, o := range old {
			if !containsJSON(new, o) {
				dropped = append(dropped, fmt.Sprintf("%q", fmt.Sprint(o)))
			}
		}
		if len(dropped) > 0 {
			w.add(viewPathString(at), dropped, "")
		}
		return
	}
	for i, o := range old {
		om, ok := o.(map[string]any)
		if !ok {
			continue
		}
		label := viewPathString(appendPath(at, i))
		var nm map[string]any
		if kv, ok := om[key]; ok {
			label = viewPathString(at) + "[" + mergeKeyString(kv) + "]"
			nm = findByKey(new, key, kv)
		} else if i < len(new) {
			if m, ok := new[i].(map[string]any); ok {
				if _, hasKey := m[key]; !hasKey {
					nm = m
				}
			}
		}
		if nm == nil {
			w.add(label, nil, key)
			continue
		}
		if dropped := droppedFields(om, nm, "", meta); len(dropped) > 0 {
			w.add(label, dropped, key)
		}
	}
}

// droppedFields lists what of old the replacement new lacks: its missing
// fields, the missing fields of nested objects, and the missing elements
// of nested lists merged by key, as paths relative to the element.
func droppedFields(old, new map[string]any, prefix string, meta strategicpatch.LookupPatchMeta) []string {
	var out []string
	for _, k := range sortedKeys(old) {
		nv, ok := new[k]
		if !ok {
			out = append(out, prefix+k)
			continue
		}
		switch ov := old[k].(type) {
		case map[string]any:
			nm, ok := nv.(map[string]any)
			if !ok {
				continue
			}
			var sub strategicpatch.LookupPatchMeta
			if meta != nil {
				sub, _, _ = meta.LookupPatchMetadataForStruct(k)
			}
			out = append(out, droppedFields(ov, nm, prefix+k+".", sub)...)
		case []any:
			nl, ok := nv.([]any)
			if !ok || meta == nil {
				continue
			}
			sub, pm, err := meta.LookupPatchMetadataForSlice(k)
			key := pm.GetPatchMergeKey()
			if err != nil || !mergesByKey(pm) || key == "" {
				continue
			}
			for _, e := range ov {
				em, ok := e.(map[string]any)
				if !ok {
					continue
				}
				kv, ok := em[key]
				if !ok {
					continue
				}
				label := prefix + k + "[" + mergeKeyString(kv) + "]"
				if m := findByKey(nl, key, kv); m == nil {
					out = append(out, label)
				} else {
					out = append(out, droppedFields(em, m, label+".", sub)...)
				}
			}
		}
	}
	return out
}

// mergeKeyString prints a merge key value: a name, a mount path, a port.
func mergeKeyString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

func containsJSON(list []any, v any) bool {
	for _, e := range list {
		if jsonEqual(e, v) {
			return true
		}
	}
	return false
}

// warningsKey carries a *warningSink through the context of a ReviseSpec
// call that a script overrides, so that the warnings of the generated
// ReviseSpec it calls (karta.generated.ReviseSpec) reach the caller.
type warningsKey struct{}

type warningSink struct {
	mu sync.Mutex
	ws []ReviseWarning
}

func (s *warningSink) add(ws []ReviseWarning) {
	s.mu.Lock()
	s.ws = append(s.ws, ws...)
	s.mu.Unlock()
}

// noteWarnings hands warnings to the sink of ctx, if it has one.
func noteWarnings(ctx context.Context, ws []ReviseWarning) {
	if ctx == nil || len(ws) == 0 {
		return
	}
	if s, ok := ctx.Value(warningsKey{}).(*warningSink); ok {
		s.add(ws)
	}
}

// hasList reports whether v holds an array at any depth.
func hasList(v any) bool {
	switch x := v.(type) {
	case []any:
		return true
	case map[string]any:
		for _, e := range x {
			if hasList(e) {
				return true
			}
		}
	}
	return false
}
