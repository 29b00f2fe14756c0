package karta

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// coreKinds are the workload kinds of the core API group, the only ones a
// root may name with an empty group.
var coreKinds = map[string]bool{"Pod": true, "ReplicationController": true}

// structure checks the component tree: the root, names, kinds, ownerRefs
// and ownership cycles. It records namesOK and treeOK for later rules.
func (v *validator) structure() {
	if v.k.Name == "" {
		// The name is how every message, the registry and the cluster
		// know the Karta; without one, errors read karta "".
		v.errorf(field.NewPath("metadata", "name"), "required: the Karta's name, used in its hooks' errors and in the registry")
	}
	sd := &v.k.Spec.StructureDefinition
	if sd.RootComponent == nil {
		v.errorf(field.NewPath("spec", "structureDefinition", "rootComponent"),
			"required: the root component describes the workload object itself")
	}
	v.componentNames()
	for _, c := range v.comps {
		if c.root {
			v.rootComponent(c)
		} else {
			v.childComponent(c)
		}
	}
	cycle := false
	if v.namesOK {
		cycle = v.cycles()
	}
	v.treeOK = sd.RootComponent != nil && v.namesOK && !cycle && v.allParentsResolved()
}

// componentNames reports empty names and each duplicate at the duplicate.
func (v *validator) componentNames() {
	v.namesOK = true
	for _, c := range v.comps {
		p := c.path.Child("name")
		switch first := v.byName[c.c.Name]; {
		case c.c.Name == "":
			v.namesOK = false
			v.errorf(p, "required: every component needs a unique name")
		case first != c:
			v.namesOK = false
			v.errorf(p, "duplicate component name %q (also used by %s); names must be unique",
				c.c.Name, first.path)
		}
	}
}

func (v *validator) rootComponent(c *compRef) {
	if c.c.Kind == nil {
		v.errorf(c.path.Child("kind"), "required on the root component: the group, version and kind of the workload")
	} else {
		v.kind(c.path.Child("kind"), *c.c.Kind)
		if k := c.c.Kind; k.Group == "" && k.Kind != "" && !coreKinds[k.Kind] {
			v.errorf(c.path.Child("kind", "group"),
				"required for %q: only the core kinds Pod and ReplicationController have an empty group", k.Kind)
		}
	}
	if c.c.OwnerRef != nil {
		v.errorf(c.path.Child("ownerRef"), "the root component has no owner; remove ownerRef")
	}
	if c.c.StatusDefinition == nil {
		v.errorf(c.path.Child("statusDefinition"),
			"required on the root component: it maps the workload's status to generic statuses")
	}
}

// kind checks a GVK whose group may be empty.
func (v *validator) kind(p *field.Path, k GroupVersionKind) {
	if k.Version == "" {
		v.errorf(p.Child("version"), "required: the API version of the kind (e.g. v1)")
	}
	if k.Kind == "" {
		v.errorf(p.Child("kind"), "required: the name of the kind (e.g. Pod)")
	}
}

func (v *validator) childComponent(c *compRef) {
	if c.c.Kind != nil {
		v.kind(c.path.Child("kind"), *c.c.Kind)
	}
	p := c.path.Child("ownerRef")
	switch ref := c.c.OwnerRef; {
	case ref == nil:
		v.errorf(p, "required: name the parent component (%s)", v.names())
	case *ref == "":
		v.errorf(p, "must not be empty: name the parent component (%s)", v.names())
	case *ref == c.c.Name:
		v.errorf(p, "ownerRef %q names the component itself; name its parent", *ref)
	case v.byName[*ref] == nil:
		v.errorf(p, "ownerRef %q does not name a component (%s)", *ref, v.names())
	default:
		c.parent = v.byName[*ref]
	}
}

func (v *validator) allParentsResolved() bool {
	for _, c := range v.comps {
		if !c.root && c.parent == nil {
			return false
		}
	}
	return true
}

// cycles reports each ownership cycle once, at the ownerRef of its first
// component in Karta order, and says whether there was any. The root's
// ownerRef is an error of its own and is not followed, so a cycle is
// always among children.
func (v *validator) cycles() bool {
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[*compRef]int{}
	found := false
	for _, start := range v.comps {
		var chain []*compRef
		c := start
		for c != nil && !c.root && state[c] == unvisited {
			state[c] = visiting
			chain = append(chain, c)
			c = c.parent
		}
		if c != nil && state[c] == visiting {
			// c is on the chain just walked: the chain from c on is a new
			// cycle.
			found = true
			v.reportCycle(cycleFrom(chain, c))
		}
		for _, d := range chain {
			state[d] = done
		}
	}
	return found
}

// cycleFrom returns the cycle of chain that starts at c.
func cycleFrom(chain []*compRef, c *compRef) []*compRef {
	for i, d := range chain {
		if d == c {
			return chain[i:]
		}
	}
	return nil
}

func (v *validator) reportCycle(cycle []*compRef) {
	// Start the story at the component that comes first in the Karta.
	first := 0
	for i, c := range cycle {
		if v.position(c) < v.position(cycle[first]) {
			first = i
		}
	}
	var names []string
	for i := range cycle {
		names = append(names, cycle[(first+i)%len(cycle)].c.Name)
	}
	root := "the root component"
	if r := v.k.Spec.StructureDefinition.RootComponent; r != nil && r.Name != "" {
		root = fmt.Sprintf("the root component %q", r.Name)
	}
	v.errorf(cycle[first].path.Child("ownerRef"),
		"ownership cycle %s; every chain of ownerRefs must end at %s", listCapped(names, " → ")+" → "+cycle[first].c.Name, root)
}

func (v *validator) position(c *compRef) int {
	for i, d := range v.comps {
		if d == c {
			return i
		}
	}
	return len(v.comps)
}

// isAncestor reports whether a is a proper ancestor of d. It needs a sound
// tree (treeOK).
func isAncestor(a, d *compRef) bool {
	for c := d.parent; c != nil; c = c.parent {
		if c == a {
			return true
		}
	}
	return false
}

// additionalChildKinds checks the RBAC kinds: required fields, duplicates
// by full GVK, and (a warning) kinds that a component already stands for.
func (v *validator) additionalChildKinds() {
	p := field.NewPath("spec", "structureDefinition", "additionalChildKinds")
	first := map[GroupVersionKind]int{}
	for i, k := range v.k.Spec.StructureDefinition.AdditionalChildKinds {
		ip := p.Index(i)
		v.kind(ip, k)
		if j, dup := first[k]; dup {
			v.errorf(ip, "duplicate of %s (%s); list each kind once", p.Index(j), k)
			continue
		}
		first[k] = i
		for _, c := range v.comps {
			if c.c.Kind != nil && *c.c.Kind == k {
				v.warnf(ip, "%s is already the kind of component %q; remove it", k, c.c.Name)
				break
			}
		}
	}
}
