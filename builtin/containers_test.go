package builtin_test

import (
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/interpreter"
)

// itemContainers is the containers list of an item's pod definition,
// whichever its style; a fragmented definition's main container (its
// container fragment, with the resources and image fragments) comes first.
func itemContainers(it interpreter.PodSpecItem) []any {
	var containers []any
	switch {
	case it.PodTemplateSpec != nil:
		containers, _, _ = unstructured.NestedSlice(it.PodTemplateSpec, "spec", "containers")
	case it.PodSpec != nil:
		containers, _, _ = unstructured.NestedSlice(it.PodSpec, "containers")
	case it.Fragmented != nil:
		f := it.Fragmented
		if f.Container != nil {
			main := maps.Clone(f.Container)
			if f.Resources != nil {
				main["resources"] = f.Resources
			}
			if f.Image != nil {
				main["image"] = *f.Image
			}
			containers = append(containers, main)
		}
		containers = append(containers, f.Containers...)
	}
	return containers
}
