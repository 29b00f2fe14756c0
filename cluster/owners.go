package cluster

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// maxOwnerDepth bounds an owner chain. The longest real one is a KServe
// InferenceService in serverless mode: Service, Configuration, Revision,
// Deployment, ReplicaSet, Pod.
const maxOwnerDepth = 10

// owners answers "does this object own that pod", following owner
// references upwards. The objects karta listed (workloads and pods) are
// known already; any other owner (a Job, a ReplicaSet, a StatefulSet) is
// read once and remembered by uid, which never names another object.
type owners struct {
	c *Client
	// refs are the owner references of known objects, by uid.
	refs map[types.UID][]metav1.OwnerReference
	// memo holds the uids above an object (its owners, theirs …).
	memo map[types.UID]map[types.UID]bool
	warn func(string)
	// warned are the owners whose read failed and was reported.
	warned map[types.UID]bool
}

func newOwners(c *Client, warn func(string)) *owners {
	if warn == nil {
		warn = func(string) {}
	}
	return &owners{c: c, refs: map[types.UID][]metav1.OwnerReference{}, memo: map[types.UID]map[types.UID]bool{}, warn: warn, warned: map[types.UID]bool{}}
}

// learn records an object's owner references. They can change (adoption,
// orphaning): when they did, what was derived from them is forgotten.
func (o *owners) learn(obj *unstructured.Unstructured) {
	uid := obj.GetUID()
	if uid == "" {
		return
	}
	refs := obj.GetOwnerReferences()
	if old, known := o.refs[uid]; known && reflect.DeepEqual(old, refs) {
		return
	}
	o.refs[uid] = refs
	if len(o.memo) > 0 {
		o.memo = map[types.UID]map[types.UID]bool{}
	}
}

// owns reports whether owner is above pod in its owner chain, or is the
// pod itself (a Pod workload).
func (o *owners) owns(ctx context.Context, pod *unstructured.Unstructured, owner types.UID) (bool, error) {
	if pod.GetUID() == owner && owner != "" {
		return true, nil
	}
	o.learn(pod)
	for _, ref := range pod.GetOwnerReferences() {
		if ref.UID == owner {
			return true, nil
		}
		up, err := o.above(ctx, pod.GetNamespace(), ref, 1)
		if err != nil || up[owner] {
			return up[owner], err
		}
	}
	return false, nil
}

// controlledByAny reports whether obj's controller is one of the objects
// whose uids are in set, or one of them is above its controller in the
// owner chain (obj itself does not count).
func (o *owners) controlledByAny(ctx context.Context, obj *unstructured.Unstructured, set map[types.UID]bool) (bool, error) {
	o.learn(obj)
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.UID == obj.GetUID() {
		return false, nil
	}
	if set[ref.UID] {
		return true, nil
	}
	up, err := o.above(ctx, obj.GetNamespace(), *ref, 1)
	if err != nil {
		return false, err
	}
	for uid := range up {
		if set[uid] && uid != obj.GetUID() {
			return true, nil
		}
	}
	return false, nil
}

// above returns every uid above the object ref points to, reading the
// owners it does not know yet in namespace ns (the owners of a
// namespaced object are in its namespace, or cluster-scoped).
func (o *owners) above(ctx context.Context, ns string, ref metav1.OwnerReference, depth int) (map[types.UID]bool, error) {
	if up, ok := o.memo[ref.UID]; ok {
		return up, nil
	}
	if _, known := o.refs[ref.UID]; !known {
		if err := o.read(ctx, ns, ref); err != nil {
			return nil, err
		}
	}
	up := map[types.UID]bool{}
	// Marked before the walk: an ownership cycle ends here.
	o.memo[ref.UID] = up
	if depth >= maxOwnerDepth {
		return up, nil
	}
	for _, next := range o.refs[ref.UID] {
		up[next.UID] = true
		more, err := o.above(ctx, ns, next, depth+1)
		if err != nil {
			delete(o.memo, ref.UID) // not complete: ask again next time
			return nil, err
		}
		for a := range more {
			up[a] = true
		}
	}
	return up, nil
}

// read fetches one owner and records its references. An owner that is gone,
// was replaced by another object of the same name, or is of a kind the
// cluster no longer serves is a chain's end; one that cannot be read
// (forbidden) is reported once and is an end too. Only a cluster that does
// not answer fails the walk.
func (o *owners) read(ctx context.Context, ns string, ref metav1.OwnerReference) error {
	o.refs[ref.UID] = nil // an end unless the read below finds more
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil
	}
	m, err := o.c.mapping(gv.WithKind(ref.Kind))
	if err != nil {
		if meta.IsNoMatchError(err) {
			return nil
		}
		return o.unreadable(ref, ns, err)
	}
	obj, err := o.c.resourceFor(m, ns).Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return o.unreadable(ref, ns, o.c.reach(err))
	case obj.GetUID() != ref.UID:
		return nil
	}
	o.refs[ref.UID] = obj.GetOwnerReferences()
	return nil
}

// unreadable reports an owner that could not be read, once, unless the
// cluster itself is gone or the call was cancelled: that ends the walk.
func (o *owners) unreadable(ref metav1.OwnerReference, ns string, err error) error {
	if isTransport(err) || ctxDone(err) {
		delete(o.refs, ref.UID)
		return err
	}
	if !o.warned[ref.UID] {
		o.warned[ref.UID] = true
		o.warn(fmt.Sprintf("cannot read %s %s/%s, an owner of pods: %v; its pods are not counted", ref.Kind, ns, ref.Name, err))
	}
	return nil
}

// isTransport reports a cluster that did not answer.
func isTransport(err error) bool {
	var ue *UnreachableError
	return errors.As(err, &ue)
}

func ctxDone(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
