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
	// TopLevel leaves out the objects that another listed object controls
	// (an ownerReference with controller: true: a RayJob's RayCluster, a
	// TrainJob's JobSet, a Deployment's ReplicaSets and a ReplicaSet's pods,
	// a CronJob's Jobs, the pods of any workload), whose controller is of a
	// kind listed, or whose controller a listed object is above in the owner
	// chain, through objects of kinds not listed (a Knative Revision's
	// Deployment, under its Service). They are part of that object's row:
	// listed together, each workload appears once, through the object a
	// user made. karta get sets it when no KIND is named. Ignored with a
	// Name.
	TopLevel bool
	// Referenced, when set, is how Watch learns that an object the
	// Kartas' references read changed (refs.Cache.OnChange): Watch gives
	// it a function to call with the object's namespace ("" for a
	// cluster-scoped one), and the workloads of that namespace (of every
	// namespace) are summarized again. List ignores it.
	Referenced func(changed func(namespace string))
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
	if opts.TopLevel && opts.Name == "" {
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
// (ListOptions.TopLevel): an object is owned when its controller (an
// ownerReference with controller: true) is one of objs or of one of
// listedKinds, or when one of objs is above its controller in the owner
// chain, through objects of kinds not listed (a Knative Revision's
// Deployment: the Revision, then its Configuration, then the Service). A
// controller of a kind listed that is not among objs is being deleted (the
// garbage collector deletes what it controlled next), or is a fixture's
// that a test left out; its dependents are its, not rows of their own. An
// owner that is not a controller, or a controller of a kind not listed that
// nothing listed is above, hides nothing. The uids come from all of objs,
// the dropped ones included, so a chain of listed objects (a Deployment,
// its ReplicaSet, the ReplicaSet's pods) folds into its top whatever the
// order.
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
		owned, err := own.controlledByAny(ctx, o.obj, listed)
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
	if ref == nil || ref.UID == obj.GetUID() {
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
