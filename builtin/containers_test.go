package builtin_test

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/interpreter"
)

// itemContainers is the containers list of an item's pod definition,
// whichever its style.
func itemContainers(it interpreter.PodSpecItem) []any {
	var containers []any
	switch {
	case it.PodTemplateSpec != nil:
		containers, _, _ = unstructured.NestedSlice(it.PodTemplateSpec, "spec", "containers")
	case it.PodSpec != nil:
		containers, _, _ = unstructured.NestedSlice(it.PodSpec, "containers")
	case it.Fragmented != nil:
		containers = it.Fragmented.Containers
	}
	return containers
}
