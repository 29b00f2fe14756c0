package karmada

import (
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// script is one operation's Lua chunk and the customization it came from.
type script struct {
	customization string
	source        string // where the customization was read, for chunk names
	op            Operation
	text          string
}

// accessor holds the scripts of one target kind after Karmada's merge
// (configmanager's resourceCustomAccessor): one script per operation, and
// every dependency script.
type accessor struct {
	scripts      map[Operation]*script
	dependencies []*script
}

// buildAccessors merges customizations by target as Karmada's LoadConfig
// does: customizations are taken in name order; for each operation the
// first customization that sets its rule wins, unless that rule's script
// is empty, in which case the first non-empty script after it fills it.
// Every non-empty dependencyInterpretation script is kept, in name order:
// GetDependencies runs them all and unions their results.
func buildAccessors(custs []*Customization) map[schema.GroupVersionKind]*accessor {
	sorted := append([]*Customization(nil), custs...)
	// Karmada's sort.Slice is not stable; equal names (impossible within
	// one API server) keep their load order here.
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })

	out := map[schema.GroupVersionKind]*accessor{}
	for _, c := range sorted {
		gvk := schema.FromAPIVersionAndKind(c.Spec.Target.APIVersion, c.Spec.Target.Kind)
		a := out[gvk]
		if a == nil {
			a = &accessor{scripts: map[Operation]*script{}}
			out[gvk] = a
		}
		for _, op := range Operations {
			if op == OpInterpretDependency {
				continue
			}
			text := op.Script(&c.Spec.Customizations)
			if text == "" {
				continue
			}
			// A rule set with an empty script does not take the slot:
			// the first non-empty script does, as Karmada's setters do.
			if a.scripts[op] == nil {
				a.scripts[op] = &script{customization: c.Name, source: c.Source, op: op, text: text}
			}
		}
		if text := OpInterpretDependency.Script(&c.Spec.Customizations); text != "" {
			a.dependencies = append(a.dependencies, &script{customization: c.Name, source: c.Source, op: OpInterpretDependency, text: text})
		}
	}
	return out
}

// enabled reports whether the accessor scripts op.
func (a *accessor) enabled(op Operation) bool {
	if op == OpInterpretDependency {
		return len(a.dependencies) > 0
	}
	return a.scripts[op] != nil
}
