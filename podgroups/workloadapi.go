package podgroups

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/operation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// The Workload API's version: the newest k8s.io/api carries,
// scheduling.k8s.io/v1beta1 (beta in Kubernetes 1.37, where kube-scheduler
// reads it; a cluster that turns the API on serves it, while v1alpha3
// must be asked for besides). k8s.io/api ships declarative validation
// (zz_generated.validations.go) for v1alpha3 only, so each object built
// here is checked through its v1alpha3 twin (validateAsV1alpha3): the
// fields karta writes are the same in both versions.
var workloadGV = schedulingv1beta1.SchemeGroupVersion

// workloadAPI builds the Workload (one pod group template per gang
// definition, in Karta order) and a PodGroup per group.
func (b *builder) workloadAPI(defs []string) error {
	obj := b.in.Object
	if obj.GetName() == "" {
		return &InvalidError{Kind: "Workload", Name: "(unnamed)", Errors: []string{"metadata.name: Required value: the workload has no name to name its Workload after"}}
	}
	if len(defs) > schedulingv1beta1.WorkloadMaxPodGroupTemplates {
		return &InvalidError{Kind: "Workload", Name: obj.GetName(), Errors: []string{fmt.Sprintf(
			"spec.podGroupTemplates: Too many: %d: must have at most %d items (one per gang definition of karta %q)",
			len(defs), schedulingv1beta1.WorkloadMaxPodGroupTemplates, b.in.Karta.Name)}}
	}
	plans := b.plans()
	if hasSubgroups(plans) && b.opts.CompositePodGroup {
		groups := make([]*interpreter.Group, len(plans))
		for i, p := range plans {
			groups[i] = p.g
		}
		reason := compositeUnfit(defs, groups)
		if reason == "" {
			return b.workloadAPIComposite(defs[0], plans)
		}
		b.warn("the groups are written without CompositePodGroups: %s", reason)
	}
	templateOf := map[string]string{}
	wl := b.newWorkload()
	wl.Spec.PodGroupTemplates = []schedulingv1beta1.PodGroupTemplate{}
	var groups []*schedulingv1beta1.PodGroup
	for _, def := range defs {
		tmpl := schedulingv1beta1.PodGroupTemplate{Name: labelName(def)}
		templateOf[def] = tmpl.Name
		// The template's minimum is the smallest of its PodGroups' (each
		// PodGroup carries its own, which the scheduler reads); 1 when none
		// of its groups is known yet.
		var least int64
		classes := map[string]bool{}
		for _, p := range plans {
			if p.g.Definition != def {
				continue
			}
			if least == 0 || p.g.MinMember < least {
				least = p.g.MinMember
			}
			classes[p.priority] = true
		}
		if least == 0 {
			least = 1
		}
		n, err := count32("Workload", obj.GetName(), fmt.Sprintf("spec.podGroupTemplates[%s].schedulingPolicy.gang.minCount", tmpl.Name), least)
		if err != nil {
			return err
		}
		tmpl.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: n}
		if len(classes) == 1 {
			for c := range classes {
				tmpl.PriorityClassName = c
			}
		}
		wl.Spec.PodGroupTemplates = append(wl.Spec.PodGroupTemplates, tmpl)
	}
	for i := range wl.Spec.PodGroupTemplates {
		tmpl := &wl.Spec.PodGroupTemplates[i]
		for _, p := range plans {
			if templateOf[p.g.Definition] != tmpl.Name {
				continue
			}
			pg, err := b.workloadPodGroup(p, wl.Name, tmpl, p.g.MinMember, p.g.Topology)
			if err != nil {
				return err
			}
			if len(p.subs) > 0 {
				b.warn("group %s: a Workload API PodGroup has no subgroups: its minCount %d is the whole group's, and its subgroups' own minimums (%s) are not kept%s", p.g.Name, p.g.MinMember, subMinimums(p), compositeHint(b.opts))
			}
			tmpl.SchedulingConstraints = pg.Spec.SchedulingConstraints
			groups = append(groups, pg)
		}
	}
	if err := b.addWorkload(wl); err != nil {
		return err
	}
	return b.addWorkloadPodGroups(groups)
}

// newWorkload is the workload's Workload, without templates: named after
// it, with spec.controllerRef pointing at it.
func (b *builder) newWorkload() *schedulingv1beta1.Workload {
	obj := b.in.Object
	return &schedulingv1beta1.Workload{
		TypeMeta:   metav1.TypeMeta{APIVersion: workloadGV.String(), Kind: "Workload"},
		ObjectMeta: b.meta(obj.GetName(), ""),
		Spec: schedulingv1beta1.WorkloadSpec{
			ControllerRef: &schedulingv1beta1.TypedLocalObjectReference{APIGroup: obj.GroupVersionKind().Group, Kind: obj.GetKind(), Name: obj.GetName()},
		},
	}
}

// addWorkload validates the Workload and adds it.
func (b *builder) addWorkload(wl *schedulingv1beta1.Workload) error {
	op := b.workloadOperation()
	errs := append(checkMeta(&wl.ObjectMeta), validateAsV1alpha3(wl, &schedulingv1alpha3.Workload{}, func(twin *schedulingv1alpha3.Workload) field.ErrorList {
		return schedulingv1alpha3.Validate_Workload(context.Background(), op, nil, twin, nil)
	})...)
	if err := invalid("Workload", wl.Name, errs); err != nil {
		return err
	}
	return b.add(wl)
}

// addWorkloadPodGroups validates the PodGroups and adds them.
func (b *builder) addWorkloadPodGroups(groups []*schedulingv1beta1.PodGroup) error {
	op := b.workloadOperation()
	for _, pg := range groups {
		errs := append(checkMeta(&pg.ObjectMeta), validateAsV1alpha3(pg, &schedulingv1alpha3.PodGroup{}, func(twin *schedulingv1alpha3.PodGroup) field.ErrorList {
			return schedulingv1alpha3.Validate_PodGroup(context.Background(), op, nil, twin, nil)
		})...)
		if err := invalid("PodGroup", pg.Name, errs); err != nil {
			return err
		}
		if err := b.add(pg); err != nil {
			return err
		}
	}
	return nil
}

func hasSubgroups(plans []*plan) bool {
	for _, p := range plans {
		if len(p.subs) > 0 {
			return true
		}
	}
	return false
}

// compositeHint says how to keep the subgroups, when that is not asked for.
func compositeHint(opts Options) string {
	if opts.CompositePodGroup {
		return ""
	}
	return " (the CompositePodGroup option, podgroups --composite-pod-group, keeps them as CompositePodGroups where the cluster serves them)"
}

// workloadPodGroup is the PodGroup of one group (or leaf subgroup): the
// gang policy with its minimum, from its template.
func (b *builder) workloadPodGroup(p *plan, workload string, tmpl *schedulingv1beta1.PodGroupTemplate, minimum int64, t topology) (*schedulingv1beta1.PodGroup, error) {
	n, err := count32("PodGroup", p.name, "spec.schedulingPolicy.gang.minCount", minimum)
	if err != nil {
		return nil, err
	}
	pg := &schedulingv1beta1.PodGroup{
		TypeMeta:   metav1.TypeMeta{APIVersion: workloadGV.String(), Kind: "PodGroup"},
		ObjectMeta: b.meta(p.name, p.g.Name),
		Spec: schedulingv1beta1.PodGroupSpec{
			WorkloadRef:       &schedulingv1beta1.WorkloadReference{WorkloadName: workload, TemplateName: tmpl.Name},
			SchedulingPolicy:  schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: n}},
			PriorityClassName: p.priority,
			// The API server's default (+default={"single": {}}), which its
			// validation then requires: pods may be disrupted one by one.
			DisruptionMode: &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}},
		},
	}
	if key := b.requiredLevel(p.g.Name, t); key != "" {
		pg.Spec.SchedulingConstraints = &schedulingv1beta1.PodGroupSchedulingConstraints{Topology: []schedulingv1beta1.TopologyConstraint{{Key: key}}}
	}
	return pg, nil
}

// workloadOperation is a create, with the options of the feature gates
// the types' validation names: TopologyAwareWorkloadScheduling and
// CompositePodGroup when asked for (CompositePodGroup needs the other
// gate, so it turns both on).
func (b *builder) workloadOperation() operation.Operation {
	return operation.Operation{Type: operation.Create, Options: map[string]bool{
		"TopologyAwareWorkloadScheduling": b.opts.TopologyAwareWorkloadScheduling || b.opts.CompositePodGroup,
		"CompositePodGroup":               b.opts.CompositePodGroup,
		"PodGroupPreemptionPolicy":        false,
	}}
}

// topology is a Karta group's or subgroup's topology.
type topology = *karta.Topology

func subMinimums(p *plan) string {
	s := ""
	for i, sp := range p.subs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %d", sp.sg.Name, sp.sg.MinMember)
		if ms := sp.sg.MinSubGroups; ms != nil {
			s += fmt.Sprintf(" (%d of its %d subgroups)", *ms, len(sp.children))
		}
	}
	return s
}

// validateAsV1alpha3 validates a v1beta1 object through its v1alpha3 twin
// (the same JSON decoded strictly into the v1alpha3 type: a field v1alpha3
// lacks would be an error, not dropped), with v1alpha3's declarative
// validation.
func validateAsV1alpha3[T any](obj any, twin *T, validate func(*T) field.ErrorList) field.ErrorList {
	data, err := json.Marshal(obj)
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		err = dec.Decode(twin)
	}
	if err != nil {
		return field.ErrorList{field.InternalError(nil, fmt.Errorf("as scheduling.k8s.io/v1alpha3: %w", err))}
	}
	return validate(twin)
}
