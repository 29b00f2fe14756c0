package kindwatch

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kartalua/karta/karta"
)

// Referencing calls f with the namespace and name of each workload of
// w's cache, described by k, that a change of obj, an object of gvk, may
// concern through k's references: for a reference to the objects a
// workload controls (list.owner, as a Deployment's ReplicaSets), obj's
// controller when it is of w's kind; for any other reference to gvk (a
// lookup by name, a label selector), every workload of obj's namespace,
// or of the cluster when obj is cluster-scoped (a TrainJob's
// ClusterTrainingRuntime). None when k does not reference gvk.
func Referencing(k *karta.Karta, w *Watch, gvk schema.GroupVersionKind, obj metav1.Object, f func(namespace, name string)) {
	var owners bool
	for _, r := range k.Spec.References {
		if r.Kind.GVK() != gvk {
			continue
		}
		if r.List == nil || !r.List.Owner {
			eachOfNamespace(w, obj.GetNamespace(), f)
			return
		}
		owners = true
	}
	if !owners {
		return
	}
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		return
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil && gv.WithKind(ref.Kind).GroupKind() == w.GVK.GroupKind() {
		f(obj.GetNamespace(), ref.Name)
	}
}

// eachOfNamespace calls f with every object w's cache holds in namespace,
// or with every one when namespace is "".
func eachOfNamespace(w *Watch, namespace string, f func(namespace, name string)) {
	if namespace == "" {
		EachKey(w, f)
		return
	}
	for _, o := range w.ByIndex(cache.NamespaceIndex, namespace) {
		if m, ok := o.(metav1.Object); ok {
			f(m.GetNamespace(), m.GetName())
		}
	}
}
