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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta/schemacheck"
)

// trainerCRD is one of Kubeflow Trainer v2.1.0's CRDs, by file name.
func trainerCRD(t *testing.T, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	file := filepath.Join("..", "builtin", "testdata", "crds", "trainer-v2.1.0", "trainer.kubeflow.org_"+name+".yaml")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	crds, err := schemacheck.DecodeCRDs(data, file)
	require.NoError(t, err)
	require.Len(t, crds, 1)
	return crds[0]
}

// The SchemaChecked condition checks the expressions that read a
// reference through the referenced kind's CRD when the cluster serves it,
// found as the workload's is (discovery, or the list of CRDs): a typo
// under $cluster is refuted, naming the referenced kind. Without that
// CRD the reference is a value the check cannot tell, and the Karta fits.
func TestSchemaCheckedThroughReferencedCRDs(t *testing.T) {
	good := kartaObject(t, "examples/kartas/trainjob-runtime.yaml", "runtime-good", t0)
	drifted := kartaObject(t, "examples/kartas/trainjob-runtime.yaml", "runtime-drifted", t0.Add(1))
	children, _, err := unstructured.NestedSlice(drifted.Object, "spec", "structureDefinition", "childComponents")
	require.NoError(t, err)
	children[0].(map[string]any)["instanceIdPath"] = "$cluster.spec.tempalte.spec.replicatedJobs[]?.name"
	require.NoError(t, unstructured.SetNestedSlice(drifted.Object, children, "spec", "structureDefinition", "childComponents"))
	// Both Kartas are for TrainJob: the registry keeps one, but each is
	// accepted and checked.
	trainJobs := trainerCRD(t, "trainjobs")
	runtimes := []runtime.Object{trainJobs, trainerCRD(t, "clustertrainingruntimes"), trainerCRD(t, "trainingruntimes")}
	refuted := `spec.structureDefinition.childComponents[0].instanceIdPath: $cluster.spec has no field "tempalte"`

	for _, tc := range []struct {
		name      string
		crds      []runtime.Object
		discovery bool
		karta     string
		status    metav1.ConditionStatus
		reason    string
		message   string
	}{
		{"fits, listed", runtimes, false, "runtime-good", metav1.ConditionTrue, ReasonSchemaMatches,
			"the paths fit the schema of CRD trainjobs.trainer.kubeflow.org and of the referenced kinds' CRDs clustertrainingruntimes.trainer.kubeflow.org, trainingruntimes.trainer.kubeflow.org"},
		{"fits, discovered", runtimes, true, "runtime-good", metav1.ConditionTrue, ReasonSchemaMatches,
			"and of the referenced kinds' CRDs clustertrainingruntimes.trainer.kubeflow.org, trainingruntimes.trainer.kubeflow.org"},
		{"refuted, listed", runtimes, false, "runtime-drifted", metav1.ConditionFalse, ReasonSchemaMismatch, refuted},
		{"refuted, discovered", runtimes, true, "runtime-drifted", metav1.ConditionFalse, ReasonSchemaMismatch, refuted},
		{"no referenced CRD", []runtime.Object{trainJobs}, true, "runtime-drifted", metav1.ConditionTrue, ReasonSchemaMatches,
			"the paths fit the schema of CRD trainjobs.trainer.kubeflow.org"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeCluster(good.DeepCopy(), drifted.DeepCopy())
			opts := Options{CRDs: fake.NewClientset(tc.crds...).ApiextensionsV1().CustomResourceDefinitions()}
			if tc.discovery {
				disco := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
				var trainer []metav1.APIResource
				for _, o := range tc.crds {
					crd := o.(*apiextensionsv1.CustomResourceDefinition)
					trainer = append(trainer, metav1.APIResource{Name: crd.Spec.Names.Plural, Kind: crd.Spec.Names.Kind})
				}
				disco.Resources = []*metav1.APIResourceList{
					{GroupVersion: KartaResource.GroupVersion().String(), APIResources: []metav1.APIResource{
						{Name: "kartas", Kind: "Karta", Verbs: metav1.Verbs{"list", "watch", "get"}}, {Name: "kartas/status", Kind: "Karta"}}},
					{GroupVersion: "trainer.kubeflow.org/v1alpha1", APIResources: trainer},
				}
				opts.Discovery = disco
			}
			startController(t, f, interpreter.NewRegistry(), opts)
			got := f.waitCondition(t, tc.karta, ConditionSchemaChecked, tc.status, tc.reason)
			assert.Contains(t, got.Message, tc.message)
			if tc.name == "no referenced CRD" {
				assert.NotContains(t, got.Message, "referenced kinds' CRDs")
			}
		})
	}
}
