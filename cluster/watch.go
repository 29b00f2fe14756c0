package cluster

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// WatchOptions select the workloads Watch follows, as ListOptions do.
type WatchOptions = ListOptions

// Watch follows workloads live. Once it has read them all, it calls
// initial with their summaries, sorted as List sorts them; then, whenever a
// workload or a pod of its namespace changes, it calls changed with each
// summary that differs from the last one passed on (a deleted workload is
// dropped silently). It returns nil when ctx is done, or the first error
// of a callback or of the initial listing.
//
// It runs on informers, one per workload kind and one for pods, so an
// expired watch is relisted and rewatched without gaps. Summaries are
// computed on one goroutine, a namespace at a time; events that arrive
// meanwhile for the same namespace are coalesced.
func (c *Client) Watch(ctx context.Context, kinds []*Kind, opts WatchOptions, initial func([]Workload) error, changed func(Workload) error) error {
	if opts.Name != "" {
		if len(kinds) != 1 {
			return fmt.Errorf("a name selects one object of one kind; %d kinds given", len(kinds))
		}
		// As kubectl get NAME -w: a missing object is an error, not an
		// empty watch.
		if _, err := c.objectsOf(ctx, kinds[0], opts); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w := &watcher{c: c, kinds: kinds, opts: opts, own: newOwners(c, opts.Warn), last: map[string]Workload{},
		queue: workqueue.NewTyped[string]()}
	defer w.queue.ShutDown()

	var synced atomic.Bool
	onError := func(_ context.Context, _ *cache.Reflector, err error) {
		if !synced.Load() {
			cancel(c.reach(err)) // the initial listing failed: so does the watch
			return
		}
		if opts.Warn != nil {
			opts.Warn(fmt.Sprintf("watch: %v (retrying)", c.reach(err)))
		}
	}
	var hasSynced []cache.InformerSynced
	for _, k := range kinds {
		ns := opts.Namespace
		if !k.Namespaced() {
			ns = ""
		}
		inf := dynamicinformer.NewFilteredDynamicInformer(c.Dynamic, k.Mapping.Resource, ns, 0,
			cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nameSelector(opts.Name)).Informer()
		if err := w.watch(inf, onError); err != nil {
			return err
		}
		w.informers = append(w.informers, inf)
		hasSynced = append(hasSynced, inf.HasSynced)
	}
	pods := dynamicinformer.NewFilteredDynamicInformer(c.Dynamic, PodResource, opts.Namespace, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil).Informer()
	if err := w.watch(pods, onError); err != nil {
		return err
	}
	w.pods = pods
	hasSynced = append(hasSynced, pods.HasSynced)
	if opts.Referenced != nil {
		opts.Referenced(w.referenceChanged)
	}

	for _, inf := range append(append([]cache.SharedIndexInformer{}, w.informers...), pods) {
		go inf.RunWithContext(ctx)
	}
	if !cache.WaitForCacheSync(ctx.Done(), hasSynced...) {
		return stopped(ctx)
	}
	synced.Store(true)

	rows, err := w.all(ctx)
	if err != nil {
		return stopped(ctx, err)
	}
	if err := initial(rows); err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		w.queue.ShutDown()
	}()
	for {
		ns, shutdown := w.queue.Get()
		if shutdown {
			return stopped(ctx)
		}
		rows, err := w.namespace(ctx, ns)
		w.queue.Done(ns)
		if err != nil {
			return stopped(ctx, err)
		}
		for _, row := range rows {
			if err := changed(row); err != nil {
				return err
			}
		}
	}
}

// stopped is Watch's result once ctx is done: nil when the caller
// cancelled it, the cause when the watch itself failed; err otherwise.
func stopped(ctx context.Context, errs ...error) error {
	if cause := context.Cause(ctx); cause != nil {
		if errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) {
			return nil
		}
		return cause
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// nameSelector narrows a workload informer to one object.
func nameSelector(name string) dynamicinformer.TweakListOptionsFunc {
	if name == "" {
		return nil
	}
	return func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
	}
}

// watcher is the state of one Watch.
type watcher struct {
	c         *Client
	kinds     []*Kind
	opts      WatchOptions
	informers []cache.SharedIndexInformer // parallel to kinds
	pods      cache.SharedIndexInformer
	own       *owners
	queue     *workqueue.Typed[string]
	// last is the summary last passed on, by workloadKey.
	last map[string]Workload
}

// watch queues the namespace of every object an informer sees change.
func (w *watcher) watch(inf cache.SharedIndexInformer, onError cache.WatchErrorHandlerWithContext) error {
	if err := inf.SetWatchErrorHandlerWithContext(onError); err != nil {
		return err
	}
	enqueue := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if u, ok := obj.(*unstructured.Unstructured); ok {
			w.queue.Add(u.GetNamespace())
		}
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	})
	return err
}

// all summarizes every workload in the informers' caches and remembers
// them as passed on.
func (w *watcher) all(ctx context.Context) ([]Workload, error) {
	namespaces := map[string]bool{}
	for _, inf := range w.informers {
		for _, obj := range inf.GetStore().List() {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				namespaces[u.GetNamespace()] = true
			}
		}
	}
	var out []Workload
	for ns := range namespaces {
		rows, err := w.summaries(ctx, ns)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			w.last[workloadKey(&r)] = r
		}
		out = append(out, rows...)
	}
	if out == nil {
		out = []Workload{}
	}
	sortWorkloads(out)
	return out, nil
}

// namespace summarizes the workloads of one namespace and returns those
// that changed since they were last passed on.
func (w *watcher) namespace(ctx context.Context, ns string) ([]Workload, error) {
	rows, err := w.summaries(ctx, ns)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var changed []Workload
	for _, r := range rows {
		key := workloadKey(&r)
		seen[key] = true
		if prev, ok := w.last[key]; ok && reflect.DeepEqual(prev, r) {
			continue
		}
		w.last[key] = r
		changed = append(changed, r)
	}
	for key, prev := range w.last {
		if prev.Namespace == ns && !seen[key] {
			delete(w.last, key) // deleted
		}
	}
	return changed, nil
}

// summaries summarizes the cached workloads of one namespace ("" for
// cluster-scoped ones) with the cached pods, sorted.
func (w *watcher) summaries(ctx context.Context, ns string) ([]Workload, error) {
	var pods []*unstructured.Unstructured
	if ns != "" {
		for _, obj := range byNamespace(w.pods, ns) {
			w.own.learn(obj)
			pods = append(pods, obj)
		}
	}
	var objs []object
	for i, inf := range w.informers {
		for _, obj := range byNamespace(inf, ns) {
			if w.opts.Name != "" && obj.GetName() != w.opts.Name {
				continue
			}
			w.own.learn(obj)
			objs = append(objs, object{kind: w.kinds[i], obj: obj})
		}
	}
	if w.opts.TopLevel && w.opts.Name == "" {
		var err error
		if objs, err = w.dropOwned(ctx, ns, objs); err != nil {
			return nil, err
		}
	}
	out := make([]Workload, 0, len(objs))
	for _, o := range objs {
		s, err := summarize(ctx, o.kind.Program, o.obj, pods, w.own)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	sortWorkloads(out)
	return out, nil
}

// dropOwned is List's dropOwned for the objects of one namespace: their
// owners are in the namespace or cluster-scoped, so the cluster-scoped
// objects the informers hold count as listed owners too.
func (w *watcher) dropOwned(ctx context.Context, ns string, objs []object) ([]object, error) {
	if ns == "" {
		return dropOwned(ctx, objs, w.kinds, w.own)
	}
	all := append([]object(nil), objs...)
	for i, inf := range w.informers {
		if w.kinds[i].Namespaced() {
			continue
		}
		for _, obj := range byNamespace(inf, "") {
			all = append(all, object{kind: w.kinds[i], obj: obj})
		}
	}
	kept, err := dropOwned(ctx, all, w.kinds, w.own)
	if err != nil {
		return nil, err
	}
	out := kept[:0]
	for _, o := range kept {
		if o.obj.GetNamespace() == ns {
			out = append(out, o)
		}
	}
	return out, nil
}

// byNamespace lists an informer's cached objects of one namespace.
func byNamespace(inf cache.SharedIndexInformer, ns string) []*unstructured.Unstructured {
	items, err := inf.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
	if err != nil { // the index exists: cannot happen
		return nil
	}
	out := make([]*unstructured.Unstructured, 0, len(items))
	for _, it := range items {
		if u, ok := it.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	return out
}

// referenceChanged queues the namespace of a referenced object that
// changed, or every namespace that holds a workload when it is
// cluster-scoped. It reads the informers' stores only (it is called from
// the references' informers).
func (w *watcher) referenceChanged(namespace string) {
	if namespace != "" {
		w.queue.Add(namespace)
		return
	}
	for _, inf := range w.informers {
		for _, ns := range inf.GetIndexer().ListIndexFuncValues(cache.NamespaceIndex) {
			w.queue.Add(ns)
		}
	}
}
