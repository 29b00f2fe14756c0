package gangoutput

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/podgroups"
)

// maxOwnerDepth bounds an owner chain. The longest real one is a KServe
// InferenceService in serverless mode: Service, Configuration, Revision,
// Deployment, ReplicaSet, Pod.
const maxOwnerDepth = 10

// hit is a workload a pod (or an object) belongs to.
type hit struct {
	key rootKey
	obj *unstructured.Unstructured
	p   *interpreter.Program
}

// The reasons a chain could not be followed.
const (
	// reasonUnknownWorkload: the chain reaches a workload kind a Karta
	// describes, and the workload is not in the cache (not synced yet, or
	// gone).
	reasonUnknownWorkload = "unknown_workload"
	// reasonLookupFailed: an owner in the chain could not be read.
	reasonLookupFailed = "lookup_failed"
)

// chainError is an owner chain that could not be followed to its end.
type chainError struct {
	reason    string
	namespace string
	ref       metav1.OwnerReference
	err       error
}

func (e *chainError) Error() string {
	what := "is not in the cache"
	if e.err != nil {
		what = "cannot be read: " + e.err.Error()
	}
	return fmt.Sprintf("%s %s/%s %s", e.ref.Kind, e.namespace, e.ref.Name, what)
}

func (e *chainError) Unwrap() error { return e.err }

// rootOf follows the controller references from refs (an object's, in
// namespace ns) upwards and returns the topmost workload of a kind whose
// Program has gang instructions; nil when the chain reaches none. Owners
// of the watched kinds are read from the caches; others, with live, from
// the API server once (then remembered by uid). Without live, such an
// owner ends the chain unless it was read before.
func (c *Controller) rootOf(ctx context.Context, ns string, refs []metav1.OwnerReference, live bool) (*hit, error) {
	set := c.kinds.Load()
	var top *hit
	ref := controllerOf(refs)
	for depth := 0; ref != nil && depth < maxOwnerDepth; depth++ {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			return top, nil
		}
		gk := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
		if w := set.Roots[gk]; w != nil {
			obj, _ := w.Get(ns, ref.Name).(*unstructured.Unstructured)
			if obj == nil || obj.GetUID() != ref.UID {
				return top, &chainError{reason: reasonUnknownWorkload, namespace: ns, ref: *ref}
			}
			if p, ok := c.registry.Get(w.GVK); ok && podgroups.HasGangInstructions(p.Karta()) {
				top = &hit{key: rootKey{gk: gk, namespace: obj.GetNamespace(), name: obj.GetName()}, obj: obj, p: p}
			}
			ref = controllerOf(obj.GetOwnerReferences())
			continue
		}
		w := set.Owners[gk]
		if gk == podGVK.GroupKind() {
			w = set.Pods // a LeaderWorkerSet's leader pod owns its workers' StatefulSet
		}
		if w != nil {
			m, err := meta.Accessor(w.Get(ns, ref.Name))
			if err != nil || m.GetUID() != ref.UID {
				return top, &chainError{reason: reasonLookupFailed, namespace: ns, ref: *ref}
			}
			ref = controllerOf(m.GetOwnerReferences())
			continue
		}
		next, known, err := c.live.refs(ctx, c, ns, *ref, live)
		if err != nil {
			return top, &chainError{reason: reasonLookupFailed, namespace: ns, ref: *ref, err: err}
		}
		if !known {
			return top, nil
		}
		ref = controllerOf(next)
	}
	return top, nil
}

// controllerOf is the reference with controller: true, nil when none.
func controllerOf(refs []metav1.OwnerReference) *metav1.OwnerReference {
	for i := range refs {
		if refs[i].Controller != nil && *refs[i].Controller {
			return &refs[i]
		}
	}
	return nil
}

// maxLiveOwners bounds the owners remembered; past it, they are
// forgotten and read again.
const maxLiveOwners = 50000

// liveOwners remembers the owner references of owners of kinds that are
// not watched, read from the API server, by uid (a uid never names
// another object). An owner that is gone, of a kind no longer served or
// that may not be read ends its chain (nil references).
type liveOwners struct {
	mu    sync.RWMutex
	byUID map[types.UID][]metav1.OwnerReference
	// warned are the kinds whose read was forbidden, logged once.
	warned map[schema.GroupKind]bool
}

func newLiveOwners() *liveOwners {
	return &liveOwners{byUID: map[types.UID][]metav1.OwnerReference{}, warned: map[schema.GroupKind]bool{}}
}

// refs are the owner references of the object ref points to; known is
// false when it was not read before and read is false.
func (l *liveOwners) refs(ctx context.Context, c *Controller, ns string, ref metav1.OwnerReference, read bool) (refs []metav1.OwnerReference, known bool, err error) {
	l.mu.RLock()
	refs, known = l.byUID[ref.UID]
	l.mu.RUnlock()
	if known || !read {
		return refs, known, nil
	}
	refs, err = c.readOwner(ctx, ns, ref, l)
	if err != nil {
		return nil, false, err
	}
	l.mu.Lock()
	if len(l.byUID) >= maxLiveOwners {
		l.byUID = map[types.UID][]metav1.OwnerReference{}
	}
	l.byUID[ref.UID] = refs
	l.mu.Unlock()
	return refs, true, nil
}

// readOwner reads an owner's references from the API server. An owner
// that is gone (or replaced by another of the same name), of a kind not
// served or that may not be read has none; another failure is an error.
func (c *Controller) readOwner(ctx context.Context, ns string, ref metav1.OwnerReference, l *liveOwners) ([]metav1.OwnerReference, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, nil
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
	m, err := c.mapper.RESTMapping(gk, gv.Version)
	if meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		ns = ""
	}
	c.metrics.ownerReads.Inc()
	obj, err := c.meta.Resource(m.Resource).Namespace(ns).Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case apierrors.IsForbidden(err):
		l.mu.Lock()
		first := !l.warned[gk]
		l.warned[gk] = true
		l.mu.Unlock()
		if first {
			c.log.Warn("gang output: an owner of pods may not be read; its chain ends there", "kind", gk.String(), "err", err)
		}
		return nil, nil
	case err != nil:
		return nil, err
	case obj.GetUID() != ref.UID:
		return nil, nil
	}
	return obj.GetOwnerReferences(), nil
}
