package kindwatch

import (
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// PodChanged reports whether a pod's update from old to obj changed what
// places it — its labels, annotations, owners or spec — or, by also (nil:
// nothing more), what else its consumer reads of it; not its status
// alone, which changes far more often. Anything but two pod objects
// counts as a change.
func PodChanged(old, obj any, also func(a, b *unstructured.Unstructured) bool) bool {
	a, ok1 := old.(*unstructured.Unstructured)
	b, ok2 := obj.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return true
	}
	return !reflect.DeepEqual(a.GetLabels(), b.GetLabels()) || !reflect.DeepEqual(a.GetAnnotations(), b.GetAnnotations()) ||
		!reflect.DeepEqual(a.GetOwnerReferences(), b.GetOwnerReferences()) || !reflect.DeepEqual(a.Object["spec"], b.Object["spec"]) ||
		(also != nil && also(a, b))
}
