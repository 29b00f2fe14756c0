package interpreter

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kartalua/karta/karta"
)

// viewNode is a place of the PodTemplateSpec view (docs/karta.md, "The PodTemplateSpec view") and the path
// it is written through. Nodes never nest: a view path is under at most
// one node.
type viewNode struct {
	// at is the node's view path, e.g. ["metadata", "labels"]; [] for a
	// template, which is the whole view.
	at []any
	// p is the path the node is written through; nil for the containers
	// node of a fragmented definition, which routes its elements itself.
	p *jqPath
	// containers marks the `spec.containers` node: [main] ++ containersPath.
	containers bool
	// object marks a node that must stay an object: the pod spec and the
	// metadata of a podSpec style, whose removal would remove the whole
	// location (with a shared location, the component itself).
	object bool
}

// The fragmented view nodes (docs/karta.md, "The PodTemplateSpec view") that map one fragment each.
var fragmentNodes = []struct {
	key string
	at  []any
}{
	{"labels", []any{"metadata", "labels"}},
	{"annotations", []any{"metadata", "annotations"}},
	{"schedulerName", []any{"spec", "schedulerName"}},
	{"priorityClassName", []any{"spec", "priorityClassName"}},
	{"nodeAffinity", []any{"spec", "affinity", "nodeAffinity"}},
	{"podAffinity", []any{"spec", "affinity", "podAffinity"}},
	{"resourceClaims", []any{"spec", "resourceClaims"}},
	{"initContainers", []any{"spec", "initContainers"}},
}

// viewNodes lists the nodes of the component's style whose paths are
// defined. A fragmented definition reaches only these nodes; a
// podSpec(+metadata) one reaches spec and, with a metadataPath, metadata.
func (cm *compModel) viewNodes() []viewNode {
	switch cm.style {
	case karta.SpecStylePodTemplateSpec:
		return []viewNode{{at: []any{}, p: cm.spec}}
	case karta.SpecStylePodSpec:
		nodes := []viewNode{{at: []any{"spec"}, p: cm.spec, object: true}}
		if cm.meta != nil {
			nodes = append(nodes, viewNode{at: []any{"metadata"}, p: cm.meta, object: true})
		}
		return nodes
	case karta.SpecStyleFragmented:
		var nodes []viewNode
		for _, fn := range fragmentNodes {
			if p := cm.frag(fn.key); p != nil {
				nodes = append(nodes, viewNode{at: fn.at, p: p})
			}
		}
		if cm.frag("containers") != nil || cm.frag("container") != nil ||
			cm.frag("image") != nil || cm.frag("resources") != nil {
			nodes = append(nodes, viewNode{at: []any{"spec", "containers"}, containers: true})
		}
		return nodes
	}
	return nil
}

// frag returns the fragment path with the given key, nil when undefined.
func (cm *compModel) frag(key string) *jqPath {
	for _, f := range cm.fragments {
		if f.key == key {
			return f.p
		}
	}
	return nil
}

// nodeFor returns the node that at is equal to or below, or nil.
func (cm *compModel) nodeFor(at []any) *viewNode {
	for i := range cm.nodes {
		if hasPrefix(at, cm.nodes[i].at) {
			return &cm.nodes[i]
		}
	}
	return nil
}

// above reports whether at is a strict ancestor of some node.
func (cm *compModel) above(at []any) bool {
	for i := range cm.nodes {
		if len(cm.nodes[i].at) > len(at) && hasPrefix(cm.nodes[i].at, at) {
			return true
		}
	}
	return false
}

// checkReach reports every patch field outside the component's nodes and
// their ancestors, whether or not it would change anything: a patch the
// Karta cannot carry out is wrong, not partly right. At an ancestor, null
// (which removes every node below) and objects (which recurse) are fine;
// any other value would replace fields that are written separately. With
// directives (a strategic merge patch), keys that start with $ are
// directives, not fields, and are left to the patch.
func (cm *compModel) checkReach(patch map[string]any, at []any, directives bool, errs []error) []error {
	for _, k := range sortedKeys(patch) {
		p := appendPath(at, k)
		v := patch[k]
		switch {
		case directives && strings.HasPrefix(k, "$"):
		case cm.nodeFor(p) != nil:
		case cm.above(p):
			if sub, ok := v.(map[string]any); ok {
				errs = cm.checkReach(sub, p, directives, errs)
			} else if v != nil {
				errs = append(errs, &UnreachableError{Component: cm.c.Name, Path: viewPathString(p),
					Reason: "only the fields below it are; patch it with an object or null"})
			}
		default:
			e := &UnreachableError{Component: cm.c.Name, Path: viewPathString(p)}
			if cm.style == karta.SpecStylePodSpec && len(p) == 1 && k == "metadata" {
				e.Reason = "it has no metadataPath"
			}
			errs = append(errs, e)
		}
	}
	return errs
}

// fragView records how the containers node of a fragmented view was
// built, for routing its changes back.
type fragView struct {
	// hasMain: element 0 of spec.containers is the main container, which
	// exists when containerPath, imagePath or resourcesPath is defined and
	// non-null.
	hasMain bool
	// main is that container as the view shows it; containers is the
	// containersPath value (nil when undefined or null).
	main       map[string]any
	containers []any
}

// view builds the PodTemplateSpec view of a present instance (docs/karta.md, "The PodTemplateSpec view").
// It shares the object's values; mergePatch copies what it changes.
func (cm *compModel) view(inst *instance) (map[string]any, *fragView, error) {
	switch cm.style {
	case karta.SpecStylePodTemplateSpec:
		t, ok := viewObject(inst.spec)
		if !ok {
			return nil, nil, fmt.Errorf("%s yields %s, not an object", cm.spec.field, describe(inst.spec))
		}
		return t, nil, nil
	case karta.SpecStylePodSpec:
		s, ok := viewObject(inst.spec)
		if !ok {
			return nil, nil, fmt.Errorf("%s yields %s, not an object", cm.spec.field, describe(inst.spec))
		}
		v := map[string]any{"spec": s}
		if cm.meta != nil && inst.meta != nil {
			md, ok := viewObject(inst.meta)
			if !ok {
				return nil, nil, fmt.Errorf("%s yields %s, not an object", cm.meta.field, describe(inst.meta))
			}
			v["metadata"] = md
		}
		return v, nil, nil
	case karta.SpecStyleFragmented:
		return cm.fragmentedView(inst)
	}
	return nil, nil, fmt.Errorf("component %q is not pod-bearing", cm.c.Name)
}

func (cm *compModel) fragmentedView(inst *instance) (map[string]any, *fragView, error) {
	v := map[string]any{}
	// Ancestors of defined nodes always exist as objects, so that a patch
	// object below them merges instead of replacing, and a null at them
	// shows up as the deletion of the ancestor.
	parentOf := func(at []any) map[string]any {
		m := v
		for _, k := range at[:len(at)-1] {
			next, ok := m[k.(string)].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[k.(string)] = next
			}
			m = next
		}
		return m
	}
	fv := &fragView{}
	for _, n := range cm.nodes {
		parent := parentOf(n.at)
		last := n.at[len(n.at)-1].(string)
		if !n.containers {
			if val := inst.fragments.get(cm.keyOf(n.p)); val != nil {
				parent[last] = val
			}
			continue
		}
		list, err := cm.containersView(inst, fv)
		if err != nil {
			return nil, nil, err
		}
		if list != nil {
			parent[last] = list
		}
	}
	return v, fv, nil
}

// containersView builds spec.containers = [main] ++ containersPath, nil
// when there is neither.
func (cm *compModel) containersView(inst *instance, fv *fragView) ([]any, error) {
	f := inst.fragments
	if c := f.get("container"); c != nil {
		m, ok := viewObject(c)
		if !ok {
			return nil, fmt.Errorf("containerPath yields %s, not an object", describe(c))
		}
		fv.main = make(map[string]any, len(m)+2)
		for k, e := range m {
			fv.main[k] = e
		}
	}
	// .image and .resources of the main container are the imagePath and
	// resourcesPath values when those are defined, whatever the container
	// holds under those keys.
	for _, key := range []string{"image", "resources"} {
		if cm.frag(key) == nil || inst.sourcesOnly {
			continue
		}
		if fv.main != nil {
			delete(fv.main, key)
		}
		if val := f.get(key); val != nil {
			if fv.main == nil {
				fv.main = map[string]any{}
			}
			fv.main[key] = val
		}
	}
	fv.hasMain = fv.main != nil
	// An empty object is no containers, as it is in every Lua path (see
	// isEmptyObject).
	if cs := f.get("containers"); cs != nil && !isEmptyObject(cs) {
		arr, ok := cs.([]any)
		if !ok {
			return nil, fmt.Errorf("containersPath yields %s, not an array", describe(cs))
		}
		fv.containers = arr
	}
	if !fv.hasMain && fv.containers == nil {
		return nil, nil
	}
	list := make([]any, 0, 1+len(fv.containers))
	if fv.hasMain {
		list = append(list, fv.main)
	}
	return append(list, fv.containers...), nil
}

// keyOf returns the fragment key of a fragment path.
func (cm *compModel) keyOf(p *jqPath) string {
	for _, f := range cm.fragments {
		if f.p == p {
			return f.key
		}
	}
	return ""
}

// hasPrefix reports whether p starts with prefix (paths of string keys
// and int indices).
func hasPrefix(p, prefix []any) bool {
	return len(p) >= len(prefix) && slices.Equal(p[:len(prefix)], prefix)
}

// appendPath returns p + elems in a new slice, so that paths built from a
// common prefix never share a backing array.
func appendPath(p []any, elems ...any) []any {
	out := make([]any, 0, len(p)+len(elems))
	return append(append(out, p...), elems...)
}
