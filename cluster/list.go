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
	// Warn receives one line per problem that does not stop the listing
	// (an owner of pods that cannot be read); nil drops them.
	Warn func(line string)
	// TopLevel leaves out the objects that another of the objects listed
	// controls (an ownerReference with controller: true and its uid): a
	// RayJob's RayCluster, a TrainJob's JobSet. Listed together, each
	// workload appears once, through the object a user made.
	TopLevel bool
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
	for _, k := range kinds {
		got, err := c.objectsOf(ctx, k, opts)
		if err != nil {
			return nil, err
		}
		objs = append(objs, got...)
	}
	if opts.TopLevel {
		objs = topLevel(objs)
	}
	own := newOwners(c, opts.Warn)
	pods := map[string][]*unstructured.Unstructured{}
	for _, o := range objs {
		own.learn(o.obj)
		ns := o.obj.GetNamespace()
		if _, listed := pods[ns]; listed || ns == "" {
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

// topLevel drops the objects whose controller is another of objs.
func topLevel(objs []object) []object {
	uids := make(map[types.UID]bool, len(objs))
	for _, o := range objs {
		uids[o.obj.GetUID()] = true
	}
	out := objs[:0:0]
	for _, o := range objs {
		if ref := metav1.GetControllerOf(o.obj); ref != nil && ref.UID != o.obj.GetUID() && uids[ref.UID] {
			continue
		}
		out = append(out, o)
	}
	return out
}

// Get reads the object NAME of a kind, in namespace ns when the kind is
// namespaced. A missing object is a *NotFoundError.
func (c *Client) Get(ctx context.Context, k *Kind, ns, name string) (*unstructured.Unstructured, error) {
	objs, err := c.objectsOf(ctx, k, ListOptions{Namespace: ns, Name: name})
	if err != nil {
		return nil, err
	}
	return objs[0].obj, nil
}

// PodsOf returns the pods obj owns, directly or through the objects in
// between (a JobSet's Jobs, a Deployment's ReplicaSets), as get counts
// them but whether or not its Karta places them: the pods of obj's
// namespace, in the order listed, never nil. An owner that cannot be read
// is reported to warn (nil drops it) and ends its chain. A cluster-scoped
// object has no pods.
func (c *Client) PodsOf(ctx context.Context, obj *unstructured.Unstructured, warn func(line string)) ([]*unstructured.Unstructured, error) {
	out := []*unstructured.Unstructured{}
	ns := obj.GetNamespace()
	if ns == "" {
		return out, nil
	}
	list, err := c.Dynamic.Resource(PodResource).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the pods of namespace %s: %w", ns, c.reach(err))
	}
	own := newOwners(c, warn)
	own.learn(obj)
	for i := range list.Items {
		own.learn(&list.Items[i])
	}
	for i := range list.Items {
		pod := &list.Items[i]
		ok, err := own.owns(ctx, pod, obj.GetUID())
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, pod)
		}
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
