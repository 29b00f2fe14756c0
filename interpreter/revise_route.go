package interpreter

import "fmt"

// router locates the view changes of one (revision, instance) through the
// component's nodes (docs/karta.md, "The PodTemplateSpec view"; docs/karta.md, "Writes: all or nothing", step 2).
type router struct {
	r    *reviser
	c    *compModel
	inst *instance
	fv   *fragView // nil unless fragmented
	view map[string]any
	src  WriteRef
	// errs are the revision's own errors; errors of a component path,
	// which are no revision's fault, go to the reviser.
	errs []error
}

func (rt *router) fail(format string, args ...any) {
	rt.errs = append(rt.errs, fmt.Errorf(format, args...))
}

func (rt *router) route(ch change) {
	if n := rt.c.nodeFor(ch.at); n != nil {
		rt.routeNode(n, ch)
		return
	}
	// A change above the nodes. checkReach lets only objects and null
	// reach an ancestor and the view holds ancestors as objects, so this
	// is the deletion of one (spec.affinity: null): it deletes every node
	// below it that has a value.
	if !ch.del {
		rt.errs = append(rt.errs, &UnreachableError{Component: rt.c.c.Name, Path: viewPathString(ch.at)})
		return
	}
	for i := range rt.c.nodes {
		n := &rt.c.nodes[i]
		if hasPrefix(n.at, ch.at) && hasValue(rt.view, n.at) {
			rt.routeNode(n, change{at: n.at, del: true})
		}
	}
}

func (rt *router) routeNode(n *viewNode, ch change) {
	if n.containers {
		rt.routeContainers(ch)
		return
	}
	if _, isMap := ch.value.(map[string]any); n.object && len(ch.at) == len(n.at) && (ch.del || !isMap) {
		rt.fail("%s must stay an object through component %q (it is the %s location); change its fields instead",
			viewPathString(n.at), rt.c.c.Name, n.p.field)
		return
	}
	rt.emit(n.p, ch.at[len(n.at):], ch)
}

// emit adds the write of ch through path p plus the view steps rest, at
// the instance's location.
func (rt *router) emit(p *jqPath, rest []any, ch change) {
	locs, err := rt.r.loc.locations(rt.c, p, rt.r.insts[rt.c])
	if err != nil {
		rt.r.errs = append(rt.r.errs, err)
		return
	}
	loc, err := resolveLocRest(&rt.r.locBuf, rt.r.obj, locs[rt.inst.index], rest)
	if err != nil {
		rt.fail("%s through %s %q: %w", viewPathString(ch.at), p.field, p.expr, err)
		return
	}
	if len(loc) == 0 {
		rt.fail("%s through %s %q: the whole object cannot be replaced", viewPathString(ch.at), p.field, p.expr)
		return
	}
	w := rt.r.newWrite()
	*w = write{src: rt.src, viewAt: ch.at, loc: loc, del: ch.del, value: ch.value}
	rt.r.writes = append(rt.r.writes, w)
}

// The view path of the main container.
var mainAt = []any{"spec", "containers", 0}

// routeContainers routes a change of spec.containers = [main] ++
// containersPath.
func (rt *router) routeContainers(ch change) {
	fv := rt.fv
	cs := rt.c.frag("containers")
	if rest := ch.at[2:]; len(rest) > 0 {
		// One element, of an array whose length did not change.
		i := rest[0].(int)
		if fv.hasMain {
			if i == 0 {
				rt.routeMain(rest[1:], ch)
				return
			}
			i--
		}
		rt.emit(cs, appendPath([]any{i}, rest[1:]...), ch)
		return
	}
	if ch.del {
		if fv.hasMain {
			rt.mainRemoved()
			return
		}
		rt.emit(cs, nil, ch)
		return
	}
	list, ok := ch.value.([]any)
	if !ok {
		rt.fail("spec.containers must be an array, not %s", describe(ch.value))
		return
	}
	if fv.hasMain || cs == nil {
		if cs == nil && len(list) != 1 {
			rt.fail("spec.containers must keep exactly one element through component %q (it has no containersPath); the patch gives %d",
				rt.c.c.Name, len(list))
			return
		}
		if len(list) == 0 {
			rt.mainRemoved()
			return
		}
		rt.replaceMain(list[0])
		list = list[1:]
	}
	if cs == nil || (fv.containers == nil && len(list) == 0) {
		return
	}
	if fv.containers == nil {
		rt.emit(cs, nil, change{at: ch.at, value: list})
		return
	}
	for _, d := range diff(fv.containers, list, nil, jsonEqual, nil) {
		rt.emit(cs, d.at, change{at: ch.at, del: d.del, value: d.value})
	}
}

// replaceMain routes a new main container given whole: key by key against
// the current one.
func (rt *router) replaceMain(v any) {
	m, ok := v.(map[string]any)
	if !ok {
		rt.fail("spec.containers[0] is the main container and must be an object, not %s", describe(v))
		return
	}
	old := rt.fv.main
	if old == nil {
		old = map[string]any{}
	}
	for _, d := range diff(old, m, mainAt, jsonEqual, nil) {
		rt.routeMain(d.at[len(mainAt):], d)
	}
}

// routeMain routes a change at spec.containers[0] + rest: .image to
// imagePath and .resources to resourcesPath when those are defined, every
// other key to containerPath.
func (rt *router) routeMain(rest []any, ch change) {
	if len(rest) == 0 {
		if ch.del {
			rt.mainRemoved()
		} else {
			rt.replaceMain(ch.value)
		}
		return
	}
	key, _ := rest[0].(string)
	switch {
	case key == "image" && rt.c.frag("image") != nil:
		rt.emit(rt.c.frag("image"), rest[1:], ch)
	case key == "resources" && rt.c.frag("resources") != nil:
		rt.emit(rt.c.frag("resources"), rest[1:], ch)
	case rt.c.frag("container") != nil:
		rt.emit(rt.c.frag("container"), rest, ch)
	default:
		rt.errs = append(rt.errs, &UnreachableError{Component: rt.c.c.Name, Path: viewPathString(ch.at),
			Reason: "it has no containerPath"})
	}
}

// checkMainKept refuses a patch that empties the main container away: one
// that leaves no containerPath object and nulls the image and resources
// the main container existed through.
func (rt *router) checkMainKept(patched any) {
	if rt.inst.fragments.get("container") != nil {
		return // the container object stays, if only as {}
	}
	list, _ := getView(patched, "spec", "containers").([]any)
	if len(list) == 0 {
		return // reported as a removal already
	}
	main, _ := list[0].(map[string]any)
	for k, v := range main {
		switch {
		case k == "image" && rt.c.frag("image") != nil, k == "resources" && rt.c.frag("resources") != nil:
			if v != nil {
				return
			}
		case rt.c.frag("container") != nil:
			return // creates the container object
		}
	}
	rt.mainRemoved()
}

func getView(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

func (rt *router) mainRemoved() {
	rt.fail("spec.containers[0] is the main container and cannot be removed through component %q", rt.c.c.Name)
}

// hasValue reports whether the view has a value at at.
func hasValue(v any, at []any) bool {
	for _, k := range at {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[k.(string)]; !ok {
			return false
		}
	}
	return true
}
