package controller

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta/schemacheck"
)

// trainJobCRD is the examples' TrainJob CRD.
func trainJobCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "examples", "tutorial-trainjob", "crd.yaml"))
	require.NoError(t, err)
	crds, err := schemacheck.DecodeCRDs(data, "crd.yaml")
	require.NoError(t, err)
	return crds[0]
}

// With Options.CRDs the controller checks each accepted Karta against the
// schema of the CRD its kind is served from, as karta validate --live
// does, and says so in the SchemaChecked condition.
func TestSchemaCheckedCondition(t *testing.T) {
	crd := trainJobCRD(t)
	unserved := crd.DeepCopy()
	unserved.Spec.Versions[0].Served = false
	drifted := kartaObject(t, "examples/kartas/trainjob-drifted.yaml", "drifted", t0)
	good := kartaObject(t, "examples/kartas/trainjob.yaml", "trainjob", t0.Add(1))

	cases := []struct {
		name      string
		crds      []runtime.Object
		discovery bool
		karta     string
		status    metav1.ConditionStatus
		reason    string
		message   []string
	}{
		{"fits, found by listing", []runtime.Object{crd}, false, "trainjob", metav1.ConditionTrue, ReasonSchemaMatches,
			[]string{"the paths fit the schema of CRD trainjobs.example.com"}},
		{"fits, found through discovery", []runtime.Object{crd}, true, "trainjob", metav1.ConditionTrue, ReasonSchemaMatches,
			[]string{"the paths fit the schema of CRD trainjobs.example.com"}},
		{"refuted", []runtime.Object{crd}, true, "drifted", metav1.ConditionFalse, ReasonSchemaMismatch, []string{
			`spec.structureDefinition.childComponents[1].scaleDefinition.replicasPath: spec has no field "worker"; did you mean "workers"?`,
			`spec.structureDefinition.rootComponent.statusDefinition.statusMappings.completed[0].byPhase: "Completed" is not a phase the schema allows`,
		}},
		{"no CRD", nil, false, "trainjob", metav1.ConditionUnknown, ReasonCRDNotServed,
			[]string{"not checked: no CRD serves example.com/v1 TrainJob"}},
		{"not discovered", nil, true, "trainjob", metav1.ConditionUnknown, ReasonCRDNotServed,
			[]string{"not checked: no CRD serves example.com/v1 TrainJob"}},
		{"not served", []runtime.Object{unserved}, false, "trainjob", metav1.ConditionUnknown, ReasonCRDNotServed, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeCluster(good.DeepCopy(), drifted.DeepCopy())
			opts := Options{CRDs: fake.NewClientset(tc.crds...).ApiextensionsV1().CustomResourceDefinitions()}
			if tc.discovery {
				disco := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
				disco.Resources = []*metav1.APIResourceList{{GroupVersion: KartaResource.GroupVersion().String(),
					APIResources: []metav1.APIResource{{Name: "kartas", Kind: "Karta", Verbs: metav1.Verbs{"list", "watch", "get"}}, {Name: "kartas/status", Kind: "Karta"}}}}
				if len(tc.crds) > 0 {
					disco.Resources = append(disco.Resources, &metav1.APIResourceList{GroupVersion: "example.com/v1",
						APIResources: []metav1.APIResource{{Name: "trainjobs/status", Kind: "TrainJob"}, {Name: "trainjobs", Kind: "TrainJob"}}})
				}
				opts.Discovery = disco
			}
			startController(t, f, interpreter.NewRegistry(), opts)
			got := f.waitCondition(t, tc.karta, ConditionSchemaChecked, tc.status, tc.reason)
			for _, want := range tc.message {
				assert.Contains(t, got.Message, want)
			}
		})
	}
}

// An invalid Karta has no SchemaChecked condition: there is nothing to
// check, and a stale one from an earlier generation is removed.
func TestSchemaCheckedDroppedWhenInvalid(t *testing.T) {
	f := newFakeCluster(kartaObject(t, "examples/kartas/trainjob.yaml", "trainjob", t0))
	startController(t, f, interpreter.NewRegistry(), Options{CRDs: fake.NewClientset(trainJobCRD(t)).ApiextensionsV1().CustomResourceDefinitions()})
	f.waitCondition(t, "trainjob", ConditionSchemaChecked, metav1.ConditionTrue, ReasonSchemaMatches)

	f.updateSpec(t, "trainjob", kartaObject(t, "examples/kartas/broken.yaml", "trainjob", t0))
	f.waitCondition(t, "trainjob", ConditionAccepted, metav1.ConditionFalse, ReasonInvalid)
	require.Eventually(t, func() bool { return f.condition(t, "trainjob", ConditionSchemaChecked) == nil }, waitFor, tick)
}
