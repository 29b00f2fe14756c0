package exporter

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/podgroups"
	"github.com/kartalua/karta/workload"
)

// StatusError is the status series' value for a workload whose status
// hook failed; the others are the Karta's generic statuses.
const StatusError = "Error"

// summary is what the exporter keeps of one workload: what its series
// need, no object. It is never modified once stored.
type summary struct {
	namespace, name string
	gvk             schema.GroupVersionKind
	karta           string
	status          string
	// since is when the workload entered status (as the exporter saw it).
	since      time.Time
	components []component
	// requests are the workload's, then each component's (component set).
	requests []request
	pods     []pod
	gangs    []gang
}

// component is one present instance of a pod-bearing component.
type component struct {
	component, instance string
	// desired is nil when the Karta has no replicas for the component.
	desired         *int64
	observed, ready int
}

// request is an amount of a resource requested by the pods the Karta
// computes (per pod × desired replicas); component is empty for the
// whole workload.
type request struct {
	component string
	resource  corev1.ResourceName
	value     float64
}

// pod is one pod of the workload and where its Karta places it (empty
// component when it places it nowhere).
type pod struct {
	name, component, instance string
}

// gang is one gang group of the workload.
type gang struct {
	name           string
	minMember      int64
	present, ready int
}

// hookError is a hook that failed while summarizing (the summary holds
// what the other hooks produced).
type hookError struct {
	hook string
	err  error
}

func (e *hookError) Error() string { return e.hook + ": " + e.err.Error() }
func (e *hookError) Unwrap() error { return e.err }

// summarize computes the summary of obj with its Program from its pods
// (every pod under obj, placed or not), at now. The errors are the hooks
// that failed; the summary holds the rest.
func summarize(ctx context.Context, p *interpreter.Program, obj *unstructured.Unstructured, pods []*unstructured.Unstructured, now time.Time) (*summary, []error) {
	s := &summary{namespace: obj.GetNamespace(), name: obj.GetName(), gvk: obj.GroupVersionKind(), karta: p.Name(), since: now}
	var errs []error
	fail := func(hook string, err error) { errs = append(errs, &hookError{hook: hook, err: err}) }
	if st, err := p.InterpretStatus(ctx, obj); err != nil {
		s.status = StatusError
		fail("InterpretStatus", err)
	} else {
		s.status = string(st.Status)
	}
	specs, err := p.GetPodSpecs(ctx, obj)
	if err != nil {
		fail("GetPodSpecs", err)
		specs = &interpreter.PodSpecs{}
	}
	expected := p.ExpectedPods(ctx, obj, specs)
	byComp := map[string]map[corev1.ResourceName]float64{}
	total := map[corev1.ResourceName]float64{}
	for i := range specs.Items {
		it := &specs.Items[i]
		s.components = append(s.components, component{component: it.Component, instance: it.Instance, desired: expected[i]})
		reqs, err := podgroups.PodRequests(it)
		if err != nil {
			fail("GetPodSpecs", fmt.Errorf("component %q instance %q: %w", it.Component, it.Instance, err))
			continue
		}
		n := 1.0 // a component without replicas is one pod
		if expected[i] != nil {
			n = float64(*expected[i])
		}
		for name, q := range reqs {
			v := q.AsApproximateFloat64() * n
			if byComp[it.Component] == nil {
				byComp[it.Component] = map[corev1.ResourceName]float64{}
			}
			byComp[it.Component][name] += v
			total[name] += v
		}
	}
	s.requests = requestList("", total)
	for _, c := range sortedKeys(byComp) {
		s.requests = append(s.requests, requestList(c, byComp[c])...)
	}
	if err := s.place(ctx, p, obj, pods); err != nil {
		fail("GetGangGroups", err)
	}
	return s, errs
}

// place places the pods in their components and gangs and counts them.
// Every pod of the workload appears in pods, placed or not.
func (s *summary) place(ctx context.Context, p *interpreter.Program, obj *unstructured.Unstructured, pods []*unstructured.Unstructured) error {
	ready := make(map[string]bool, len(pods))
	for _, pd := range pods {
		ready[interpreter.PodKey(pd.Object)] = podReady(pd)
	}
	var err error
	res := &interpreter.GangResult{}
	if len(pods) > 0 || workload.PlacesByGang(p) {
		// A v2 group exists before its pods: its gang is reported at 0.
		res, err = workload.Place(ctx, p, obj, pods)
		if err != nil {
			res = &interpreter.GangResult{}
		}
	}
	where := make(map[string]interpreter.Placement, len(res.Placements))
	for _, pl := range res.Placements {
		where[pl.Pod] = pl
	}
	for _, pd := range pods {
		key := interpreter.PodKey(pd.Object)
		pl := where[key]
		s.pods = append(s.pods, pod{name: pd.GetName(), component: pl.Component, instance: pl.Instance})
		if pl.Component == "" {
			continue
		}
		c := s.component(pl.Component, pl.Instance)
		c.observed++
		if ready[key] {
			c.ready++
		}
	}
	for _, g := range res.Groups {
		gg := gang{name: g.Name, minMember: g.MinMember, present: len(g.Pods)}
		for _, key := range g.Pods {
			if ready[key] {
				gg.ready++
			}
		}
		s.gangs = append(s.gangs, gg)
	}
	return err
}

// component is the instance's entry, added (without desired replicas)
// when the pod specs have none: its pods exist but the object no longer
// asks for them.
func (s *summary) component(name, instance string) *component {
	for i := range s.components {
		if s.components[i].component == name && s.components[i].instance == instance {
			return &s.components[i]
		}
	}
	s.components = append(s.components, component{component: name, instance: instance})
	return &s.components[len(s.components)-1]
}

// podReady reports whether a pod's Ready condition is True.
func podReady(pd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(pd.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == string(corev1.PodReady) {
			return m["status"] == string(corev1.ConditionTrue)
		}
	}
	return false
}

func requestList(comp string, m map[corev1.ResourceName]float64) []request {
	out := make([]request, 0, len(m))
	for _, name := range sortedKeys(m) {
		out = append(out, request{component: comp, resource: name, value: m[name]})
	}
	return out
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// resourceLabel is a resource's name as kube-state-metrics writes it in
// its resource label (nvidia.com/gpu is nvidia_com_gpu), and its unit.
func resourceLabel(name corev1.ResourceName) (resource, unit string) {
	unit = "integer"
	switch {
	case name == corev1.ResourceCPU:
		unit = "core"
	case name == corev1.ResourceMemory, name == corev1.ResourceEphemeralStorage, name == corev1.ResourceStorage,
		strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix):
		unit = "byte"
	}
	return strings.NewReplacer(".", "_", "/", "_", "-", "_").Replace(string(name)), unit
}
