package cluster

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/workload"
)

// StatusError is the status of a workload whose hooks failed; the other
// statuses are the Karta's generic ones (Running, Failed, …, Undefined).
const StatusError = "Error"

// Workload is what karta get shows of one workload object: the generic
// status, the pods each component instance should have and has, and the
// gang groups of the pods that exist. Its JSON is the -o json of get.
type Workload struct {
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Karta is the name of the Karta that interprets the object.
	Karta string `json:"karta"`
	// Status is InterpretStatus's primary status, or StatusError.
	Status     string      `json:"status"`
	Components []Component `json:"components"`
	Groups     []GangGroup `json:"groups"`
	// Error is why a hook failed (the first failure); the rest of the
	// summary is what the other hooks produced.
	Error             string      `json:"error,omitempty"`
	CreationTimestamp metav1.Time `json:"creationTimestamp"`

	uid types.UID
}

// Component is one present instance of a pod-bearing component.
type Component struct {
	Component string `json:"component"`
	Instance  string `json:"instance"`
	// Expected is the number of pods the object asks for, across the
	// whole workload (replicas times those of scaled ancestors, e.g. per
	// LeaderWorkerSet group); nil when the Karta has no replicas for it.
	Expected *int64 `json:"expected"`
	// Existing is the number of the workload's pods placed in this
	// instance; nil when the Karta cannot place pods (it has no gang
	// scheduling instructions, through which pods are placed).
	Existing *int `json:"existing"`
}

// GangGroup is one gang group of the workload's existing pods.
type GangGroup struct {
	Name      string `json:"name"`
	MinMember int64  `json:"minMember"`
	// Present is how many of the workload's pods are in the group.
	Present int `json:"present"`
}

// Label names a component instance in a table: the component, with the
// instance id when there is one that says more than the component's name.
func (c Component) Label() string {
	if c.Instance == "" || c.Instance == c.Component {
		return c.Component
	}
	return c.Component + "/" + c.Instance
}

// summarize computes the summary of obj with its Program. pods are the
// pods of obj's namespace; own says which of them belong to obj.
func summarize(ctx context.Context, p *interpreter.Program, obj *unstructured.Unstructured, pods []*unstructured.Unstructured, own *owners) (Workload, error) {
	w := Workload{
		Namespace:         obj.GetNamespace(),
		Name:              obj.GetName(),
		APIVersion:        obj.GetAPIVersion(),
		Kind:              obj.GetKind(),
		Karta:             p.Name(),
		Components:        []Component{},
		Groups:            []GangGroup{},
		CreationTimestamp: obj.GetCreationTimestamp(),
		uid:               obj.GetUID(),
	}
	fail := func(err error) {
		if w.Error == "" {
			w.Error = oneLine(err.Error())
		}
		w.Status = StatusError
	}
	if st, err := p.InterpretStatus(ctx, obj); err != nil {
		fail(err)
	} else {
		w.Status = string(st.Status)
	}
	specs, err := p.GetPodSpecs(ctx, obj)
	if err != nil {
		fail(err)
		return w, ctx.Err()
	}
	w.Components = components(ctx, p, obj, specs)
	// Only a Program whose GetGangGroups places pods counts them (the
	// built-ins without gang instructions show no existing pods).
	if !workload.PlacesByGang(p) {
		return w, ctx.Err()
	}
	mine, err := ownPods(ctx, p, obj, pods, own)
	if err != nil {
		if ctx.Err() != nil || isTransport(err) {
			return w, err
		}
		fail(err)
		return w, nil
	}
	for i := range w.Components {
		w.Components[i].Existing = new(int)
	}
	if len(mine) == 0 {
		return w, nil
	}
	gangs, err := workload.Place(ctx, p, obj, mine)
	if err != nil {
		fail(err)
		return w, ctx.Err()
	}
	for _, pl := range gangs.Placements {
		for i := range w.Components {
			c := &w.Components[i]
			if c.Component == pl.Component && c.Instance == pl.Instance {
				*c.Existing++
			}
		}
	}
	for _, g := range gangs.Groups {
		w.Groups = append(w.Groups, GangGroup{Name: g.Name, MinMember: g.MinMember, Present: len(g.Pods)})
	}
	return w, nil
}

// components lists the present instances of the pod-bearing components
// with their expected pod counts (Program.ExpectedPods: an instance's own
// replicas times those of its scaled ancestors, a LeaderWorkerSet's
// leader 1 per group, so spec.replicas in all).
func components(ctx context.Context, p *interpreter.Program, obj *unstructured.Unstructured, specs *interpreter.PodSpecs) []Component {
	out := make([]Component, 0, len(specs.Items))
	expected := p.ExpectedPods(ctx, obj, specs)
	for i, it := range specs.Items {
		c := Component{Component: it.Component, Instance: it.Instance}
		c.Expected = expected[i]
		out = append(out, c)
	}
	return out
}

// ownPods picks obj's pods among its namespace's: those its Karta places
// in a component (in a gang or not: workload.Place) and that obj owns,
// directly or through intermediate owners (a JobSet's Jobs, a Deployment's
// ReplicaSets). The
// placement runs first, on every pod, so that owners are read only for
// the pods that could be obj's.
func ownPods(ctx context.Context, p *interpreter.Program, obj *unstructured.Unstructured, pods []*unstructured.Unstructured, own *owners) ([]*unstructured.Unstructured, error) {
	if isPod(obj) {
		// A pod's only pod is itself: what it owns (a LeaderWorkerSet
		// leader's StatefulSet of workers) belongs to a workload of its own.
		var self []*unstructured.Unstructured
		for _, pod := range pods {
			if pod.GetUID() == obj.GetUID() && pod.GetUID() != "" {
				self = append(self, pod)
			}
		}
		pods = self
	}
	if len(pods) == 0 {
		return nil, nil
	}
	res, err := workload.Place(ctx, p, obj, pods)
	if err != nil {
		return nil, err
	}
	placed := make(map[string]bool, len(res.Placements))
	for _, pl := range res.Placements {
		placed[pl.Pod] = true
	}
	var mine []*unstructured.Unstructured
	for _, pod := range pods {
		if !placed[interpreter.PodKey(pod.Object)] {
			continue
		}
		ok, err := own.owns(ctx, pod, obj.GetUID())
		if err != nil {
			return nil, err
		}
		if ok {
			mine = append(mine, pod)
		}
	}
	return mine, nil
}

// isPod reports a workload object that is a Pod itself.
func isPod(obj *unstructured.Unstructured) bool {
	return obj.GetAPIVersion() == "v1" && obj.GetKind() == "Pod"
}

// oneLine keeps an error on one line: a Lua error may quote several.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", `\n`, "\n", `\n`, "\r", `\n`).Replace(strings.TrimRight(s, "\n"))
}

// workloadKey identifies a workload across events.
func workloadKey(w *Workload) string {
	return fmt.Sprintf("%s|%s|%s|%s", w.APIVersion, w.Kind, w.Namespace, w.Name)
}
