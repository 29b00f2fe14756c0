package exporter

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kartalua/karta/internal/kindwatch"
)

// maxOwnerDepth bounds an owner chain. The longest real one is a KServe
// InferenceService in serverless mode: Service, Configuration, Revision,
// Deployment, ReplicaSet, Pod.
const maxOwnerDepth = 10

// key names a workload: its kind and namespace/name.
type key struct {
	gk        schema.GroupKind
	namespace string
	name      string
}

func (k key) String() string { return k.gk.String() + " " + k.namespace + "/" + k.name }

// topOf follows obj's controller references upwards through the caches
// and returns the topmost object of a described kind above obj (obj
// itself does not count); false when there is none. A chain ends at an
// owner the caches do not hold (a kind not watched, or not cached yet).
func topOf(s *kindwatch.Set, obj metav1.Object) (key, bool) {
	var top key
	found := false
	ns := obj.GetNamespace()
	ref := metav1.GetControllerOfNoCopy(obj)
	for depth := 0; ref != nil && depth < maxOwnerDepth; depth++ {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			break
		}
		gk := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
		w, described := s.Roots[gk]
		if !described {
			w = s.Owners[gk]
		}
		if w == nil && gk == podGVK.GroupKind() {
			w = s.Pods // a LeaderWorkerSet's leader pod owns its workers' StatefulSet
		}
		if w == nil {
			break
		}
		up := w.GetMeta(ns, ref.Name)
		if up == nil || up.GetUID() != ref.UID {
			break
		}
		if described {
			top, found = key{gk: gk, namespace: up.GetNamespace(), name: up.GetName()}, true
		}
		ref = metav1.GetControllerOfNoCopy(up)
	}
	return top, found
}

// descend lists what is under obj through controller references in the
// caches: its pods (obj itself when it is a pod) and the objects of
// described kinds under it (its pods among them when Pods are described),
// which are components of obj's workload, not workloads.
func descend(s *kindwatch.Set, obj *unstructured.Unstructured) (pods []*unstructured.Unstructured, nested []key) {
	if obj.GroupVersionKind() == podGVK {
		pods = append(pods, obj)
	}
	seen := map[types.UID]bool{obj.GetUID(): true}
	frontier := []types.UID{obj.GetUID()}
	type watch struct {
		w         *kindwatch.Watch
		described bool
	}
	watches := make([]watch, 0, len(s.Roots)+len(s.Owners))
	for _, w := range s.Roots {
		if w != s.Pods {
			watches = append(watches, watch{w, true})
		}
	}
	for _, w := range s.Owners {
		watches = append(watches, watch{w, false})
	}
	for depth := 0; depth < maxOwnerDepth && len(frontier) > 0; depth++ {
		var next []types.UID
		for _, uid := range frontier {
			for _, o := range kindwatch.ByOwner(s.Pods, uid) {
				if u, ok := o.(*unstructured.Unstructured); ok && !seen[u.GetUID()] {
					seen[u.GetUID()] = true
					pods = append(pods, u)
					if s.Roots[podGVK.GroupKind()] != nil {
						// A pod seen before its owner was its own workload.
						nested = append(nested, key{gk: podGVK.GroupKind(), namespace: u.GetNamespace(), name: u.GetName()})
					}
					next = append(next, u.GetUID()) // a leader pod owns its workers
				}
			}
			for _, w := range watches {
				for _, o := range kindwatch.ByOwner(w.w, uid) {
					m, err := meta.Accessor(o)
					if err != nil || seen[m.GetUID()] {
						continue
					}
					seen[m.GetUID()] = true
					next = append(next, m.GetUID())
					if w.described {
						nested = append(nested, key{gk: w.w.GVK.GroupKind(), namespace: m.GetNamespace(), name: m.GetName()})
					}
				}
			}
		}
		frontier = next
	}
	return pods, nested
}
