package podgroups_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/operation"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	"github.com/kartalua/karta/podgroups"
)

// The third-party PodGroups as their published Go types declare them
// (json names and types only), to decode the built objects strictly: a
// misspelt or unknown field fails.

// kaiPodGroup mirrors github.com/kai-scheduler/api scheduling/v2alpha2
// PodGroup's spec (podgroup_types.go).
type kaiPodGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		MinMember          *int32           `json:"minMember,omitempty"`
		MinSubGroup        *int32           `json:"minSubGroup,omitempty"`
		Queue              string           `json:"queue,omitempty"`
		PriorityClassName  string           `json:"priorityClassName,omitempty"`
		Preemptibility     string           `json:"preemptibility,omitempty"`
		TopologyConstraint *kaiTopology     `json:"topologyConstraint,omitempty"`
		SubGroups          []kaiSubGroup    `json:"subGroups,omitempty"`
		MarkUnschedulable  *bool            `json:"markUnschedulable,omitempty"`
		SchedulingBackoff  *int32           `json:"schedulingBackoff,omitempty"`
		PreemptionDelay    *metav1.Duration `json:"preemptionDelay,omitempty"`
	} `json:"spec"`
}

type kaiSubGroup struct {
	Name               string       `json:"name"`
	MinMember          *int32       `json:"minMember,omitempty"`
	MinSubGroup        *int32       `json:"minSubGroup,omitempty"`
	Parent             *string      `json:"parent,omitempty"`
	TopologyConstraint *kaiTopology `json:"topologyConstraint,omitempty"`
}

type kaiTopology struct {
	PreferredTopologyLevel string `json:"preferredTopologyLevel,omitempty"`
	RequiredTopologyLevel  string `json:"requiredTopologyLevel,omitempty"`
	Topology               string `json:"topology,omitempty"`
}

// coschedulingPodGroup mirrors sigs.k8s.io/scheduler-plugins
// apis/scheduling/v1alpha1 PodGroup's spec (types.go).
type coschedulingPodGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		MinMember              int32               `json:"minMember,omitempty"`
		MinResources           corev1.ResourceList `json:"minResources,omitempty"`
		ScheduleTimeoutSeconds *int32              `json:"scheduleTimeoutSeconds,omitempty"`
	} `json:"spec"`
}

// checkObject decodes a built object strictly into its API's type and
// checks it as that API does: the Workload API with its own declarative
// validation; the others against their CRDs' stated limits.
func checkObject(t *testing.T, target podgroups.Target, o *unstructured.Unstructured) {
	t.Helper()
	var meta *metav1.ObjectMeta
	switch target {
	case podgroups.WorkloadAPI:
		// v1beta1, validated through v1alpha3, the version k8s.io/api
		// ships declarative validation for (the fields are the same).
		if o.GetKind() != "CompositePodGroup" { // only in v1alpha3
			require.Equal(t, "scheduling.k8s.io/v1beta1", o.GetAPIVersion())
		}
		// The hierarchy's fields need the CompositePodGroup gate (and
		// TopologyAwareWorkloadScheduling, which it requires); the flat
		// objects are valid without either.
		_, composite, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "compositePodGroupTemplates")
		_, nested, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "parentCompositePodGroupName")
		composite = composite || nested || o.GetKind() == "CompositePodGroup"
		op := operation.Operation{Type: operation.Create, Options: map[string]bool{
			"TopologyAwareWorkloadScheduling": composite, "CompositePodGroup": composite, "PodGroupPreemptionPolicy": false}}
		switch o.GetKind() {
		case "CompositePodGroup":
			require.Equal(t, "scheduling.k8s.io/v1alpha3", o.GetAPIVersion())
			var cpg schedulingv1alpha3.CompositePodGroup
			strictDecode(t, o.Object, &cpg)
			assert.Empty(t, schedulingv1alpha3.Validate_CompositePodGroup(context.Background(), op, nil, &cpg, nil))
			meta = &cpg.ObjectMeta
			assert.Empty(t, apivalidation.ValidateObjectMeta(meta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata")))
			assert.Equal(t, "karta", meta.Labels[podgroups.ManagedByLabel])
			return
		case "Workload":
			var wl schedulingv1beta1.Workload
			strictDecode(t, o.Object, &wl)
			var twin schedulingv1alpha3.Workload
			strictDecode(t, o.Object, &twin)
			assert.Empty(t, schedulingv1alpha3.Validate_Workload(context.Background(), op, nil, &twin, nil))
			meta = &wl.ObjectMeta
		case "PodGroup":
			var pg schedulingv1beta1.PodGroup
			strictDecode(t, o.Object, &pg)
			var twin schedulingv1alpha3.PodGroup
			strictDecode(t, o.Object, &twin)
			assert.Empty(t, schedulingv1alpha3.Validate_PodGroup(context.Background(), op, nil, &twin, nil))
			meta = &pg.ObjectMeta
		default:
			t.Fatalf("unexpected kind %s", o.GetKind())
		}
	case podgroups.KAI:
		require.Equal(t, "scheduling.run.ai/v2alpha2", o.GetAPIVersion())
		var pg kaiPodGroup
		strictDecode(t, o.Object, &pg)
		require.NotNil(t, pg.Spec.MinMember)
		assert.GreaterOrEqual(t, *pg.Spec.MinMember, int32(1))
		assert.Nil(t, pg.Spec.MinSubGroup, "minMember and minSubGroup are exclusive")
		for _, sg := range pg.Spec.SubGroups {
			assert.Empty(t, validation.IsDNS1123Label(sg.Name), "subgroup names are DNS labels")
			// One of minMember and minSubGroup (exclusive), at least 0.
			n := sg.MinMember
			if sg.MinSubGroup != nil {
				assert.Nil(t, sg.MinMember, "subgroup %s: minMember and minSubGroup are exclusive", sg.Name)
				n = sg.MinSubGroup
			}
			require.NotNil(t, n, "subgroup %s", sg.Name)
			assert.GreaterOrEqual(t, *n, int32(0))
		}
		assert.NoError(t, kaiValidateSubGroups(pg.Spec.SubGroups))
		meta = &pg.ObjectMeta
	case podgroups.Volcano:
		require.Equal(t, "scheduling.volcano.sh/v1beta1", o.GetAPIVersion())
		var pg volcanov1beta1.PodGroup
		strictDecode(t, o.Object, &pg)
		assert.GreaterOrEqual(t, pg.Spec.MinMember, int32(1))
		for task := range pg.Spec.MinTaskMember {
			assert.Empty(t, validation.IsDNS1123Label(task))
		}
		// The limits Volcano's v1.14.0 CRD states for subGroupPolicy, and
		// what its scheduler needs to read a policy (a valid selector,
		// label keys); its webhook checks only networkTopology, which
		// karta does not write.
		names := map[string]bool{}
		for i, pol := range pg.Spec.SubGroupPolicy {
			assert.False(t, names[pol.Name], "policy names are unique: %s", pol.Name)
			names[pol.Name] = true
			assert.LessOrEqual(t, len(pol.Name), 253)
			require.NotNil(t, pol.SubGroupSize, "policy %d", i)
			assert.GreaterOrEqual(t, *pol.SubGroupSize, int32(1))
			require.NotNil(t, pol.MinSubGroups, "policy %d", i)
			assert.GreaterOrEqual(t, *pol.MinSubGroups, int32(0))
			assert.Nil(t, pol.NetworkTopology)
			require.NotNil(t, pol.LabelSelector)
			assert.Empty(t, metav1validation.ValidateLabelSelector(pol.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, field.NewPath("labelSelector")))
			_, err := metav1.LabelSelectorAsSelector(pol.LabelSelector)
			assert.NoError(t, err)
			for _, k := range pol.MatchLabelKeys {
				assert.Empty(t, validation.IsQualifiedName(k))
			}
		}
		meta = &pg.ObjectMeta
	case podgroups.Coscheduling:
		require.Equal(t, "scheduling.x-k8s.io/v1alpha1", o.GetAPIVersion())
		var pg coschedulingPodGroup
		strictDecode(t, o.Object, &pg)
		assert.GreaterOrEqual(t, pg.Spec.MinMember, int32(1))
		assert.Empty(t, validation.IsValidLabelValue(pg.Name), "the name is the pods' label value")
		meta = &pg.ObjectMeta
	}
	assert.Empty(t, apivalidation.ValidateObjectMeta(meta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata")))
	assert.Equal(t, "karta", meta.Labels[podgroups.ManagedByLabel])
}

// kaiValidateSubGroups is KAI-Scheduler's PodGroup webhook's check of a
// subgroup tree (pkg/apis/scheduling/v2alpha2/podgroup_webhook.go,
// validateSubGroups): unique names, every parent a subgroup, no cycle.
func kaiValidateSubGroups(subs []kaiSubGroup) error {
	byName := map[string]*kaiSubGroup{}
	for i := range subs {
		if byName[subs[i].Name] != nil {
			return fmt.Errorf("duplicate subgroup name %s", subs[i].Name)
		}
		byName[subs[i].Name] = &subs[i]
	}
	for _, sg := range byName {
		if sg.Parent != nil && byName[*sg.Parent] == nil {
			return fmt.Errorf("parent %s of %s was not found", *sg.Parent, sg.Name)
		}
	}
	// Walk up from each subgroup: a cycle comes back to it.
	for _, sg := range byName {
		seen := map[string]bool{}
		for cur := sg; cur != nil && cur.Parent != nil; cur = byName[*cur.Parent] {
			if seen[cur.Name] {
				return errors.New("cycle detected in subgroups")
			}
			seen[cur.Name] = true
		}
	}
	return nil
}
