package cluster

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// PodResource is where pods live.
var PodResource = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// ListOptions select the workloads List summarizes.
type ListOptions struct {
	// Namespace is the namespace to list; "" lists all namespaces.
	// Cluster-scoped kinds are listed whatever it is.
	Namespace string
	// Name, when set, selects one object; List then takes one kind.
	Name string
	// HideOwned leaves out the objects that another listed object owns,
	// directly or through owners in between: a Deployment's ReplicaSets and
	// their pods, a CronJob's Jobs, the pods of any workload, a RayJob's
	// RayCluster. They are part of that object's row. karta get sets it when
	// no KIND is named, so that every kind listed at once shows each
	// workload once, at its top. Ignored with a Name.
	HideOwned bool
	// Warn receives one line per problem that does not stop the listing
	// (an owner of pods that cannot be read); nil drops them.
	Warn func(line string)
}

// NotFoundError is a named workload that does not exist.
type NotFoundError struct {
	Kind      *Kind
	Namespace string
	Name      string
}

func (e *NotFoundError) Error() string {
	gr := e.Kind.Mapping.Resource.GroupResource()
	if e.Namespace == "" || !e.Kind.Namespaced() {
		return fmt.Sprintf("%s %q not found", gr, e.Name)
	}
	return fmt.Sprintf("%s %q not found in namespace %q", gr, e.Name, e.Namespace)
}

// List summarizes the workloads of the given kinds, sorted by namespace,
// kind and name. The pods of each namespace that holds a workload are
// listed once, whatever the number of workloads there.
func (c *Client) List(ctx context.Context, kinds []*Kind, opts ListOptions) ([]Workload, error) {
	if opts.Name != "" && len(kinds) != 1 {
		return nil, fmt.Errorf("a name selects one object of one kind; %d kinds given", len(kinds))
	}
	var objs []object
	// allPods are the pods when Pods are one of the kinds listed: that list
	// serves as every namespace's pods too.
	var allPods []*unstructured.Unstructured
	allPodsListed := false
	for _, k := range kinds {
		got, err := c.objectsOf(ctx, k, opts)
		if err != nil {
			return nil, err
		}
		objs = append(objs, got...)
		if k.Mapping.Resource == PodResource && opts.Name == "" {
			allPodsListed = true
			for _, o := range got {
				allPods = append(allPods, o.obj)
			}
		}
	}
	own := newOwners(c, opts.Warn)
	pods := map[string][]*unstructured.Unstructured{}
	for _, pod := range allPods {
		pods[pod.GetNamespace()] = append(pods[pod.GetNamespace()], pod)
	}
	for _, o := range objs {
		own.learn(o.obj)
		ns := o.obj.GetNamespace()
		if _, listed := pods[ns]; listed || ns == "" || allPodsListed {
			continue
		}
		list, err := c.Dynamic.Resource(PodResource).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing the pods of namespace %s: %w", ns, c.reach(err))
		}
		nsPods := make([]*unstructured.Unstructured, len(list.Items))
		for i := range list.Items {
			nsPods[i] = &list.Items[i]
			own.learn(nsPods[i])
		}
		pods[ns] = nsPods
	}
	if opts.HideOwned && opts.Name == "" {
		var err error
		if objs, err = dropOwned(ctx, objs, kinds, own); err != nil {
			return nil, err
		}
	}
	out := make([]Workload, 0, len(objs))
	for _, o := range objs {
		w, err := summarize(ctx, o.kind.Program, o.obj, pods[o.obj.GetNamespace()], own)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	sortWorkloads(out)
	return out, nil
}

// dropOwned keeps the objects that no other listed object owns
// (ListOptions.HideOwned). An object is owned when its controller is of a
// kind being listed (one of listedKinds) (a Deployment's ReplicaSet, a ReplicaSet's pod, a
// MPIJob's launcher Job: shown in its controller's row, whichever version
// lists it), or when a listed object is above it in its owner chain
// through owners of other kinds (a Knative Revision's Deployment under its
// Service). The owners' uids come from all of objs, the dropped ones
// included, so a chain folds into its top whatever the order.
func dropOwned(ctx context.Context, objs []object, listedKinds []*Kind, own *owners) ([]object, error) {
	listed := make(map[types.UID]bool, len(objs))
	for _, o := range objs {
		if uid := o.obj.GetUID(); uid != "" {
			listed[uid] = true
		}
	}
	kinds := make(map[schema.GroupKind]bool, len(listedKinds))
	for _, k := range listedKinds {
		kinds[k.GVK().GroupKind()] = true
	}
	out := make([]object, 0, len(objs))
	for _, o := range objs {
		if controlledByKind(o.obj, kinds) {
			continue
		}
		owned, err := own.ownedByAny(ctx, o.obj, listed)
		if err != nil {
			return nil, err
		}
		if !owned {
			out = append(out, o)
		}
	}
	return out, nil
}

// controlledByKind reports an object whose controller reference names one
// of kinds.
func controlledByKind(obj *unstructured.Unstructured, kinds map[schema.GroupKind]bool) bool {
	ref := metav1.GetControllerOf(obj)
	if ref == nil {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && kinds[gv.WithKind(ref.Kind).GroupKind()]
}

// object is a workload object with its kind.
type object struct {
	kind *Kind
	obj  *unstructured.Unstructured
}

// objectsOf lists (or, with a name, reads) the objects of one kind.
func (c *Client) objectsOf(ctx context.Context, k *Kind, opts ListOptions) ([]object, error) {
	r := c.resourceFor(k.Mapping, opts.Namespace)
	if opts.Name != "" {
		obj, err := r.Get(ctx, opts.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, &NotFoundError{Kind: k, Namespace: opts.Namespace, Name: opts.Name}
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s %s: %w", k.Mapping.Resource.GroupResource(), opts.Name, c.reach(err))
		}
		return []object{{kind: k, obj: obj}}, nil
	}
	list, err := r.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", k.Mapping.Resource.GroupResource(), c.reach(err))
	}
	out := make([]object, len(list.Items))
	for i := range list.Items {
		out[i] = object{kind: k, obj: &list.Items[i]}
	}
	return out, nil
}

// sortWorkloads orders rows as get prints them: by namespace, kind, name
// (and apiVersion, for two versions of one kind).
func sortWorkloads(ws []Workload) {
	sort.Slice(ws, func(i, j int) bool {
		a, b := &ws[i], &ws[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.APIVersion < b.APIVersion
	})
}
