package builtin_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/internal/exampledir"
	"github.com/kartalua/karta/internal/kartatest"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/karta/schemacheck"
	"github.com/kartalua/karta/object"
)

// noPublishedCRD are the built-ins whose operators' CRDs are not in
// testdata/crds (see its README): the module proxy serves no version of
// their Go modules (flinkdeployment: the Flink operator is Java and
// publishes no Go module at all).
var noPublishedCRD = []string{"dynamographdeployment", "dynamographdeployment-v1beta1", "flinkdeployment", "milvus", "nimcache", "nimservice", "notebook", "podcliqueset", "sparkapplication"}

// coreKinds are the built-ins of Kubernetes' own workload kinds. The API
// server serves them natively: there is no CRD, so no structural schema to
// check their Kartas' paths against, and they are skipped here.
// TestCoreExamplesMatchTheAPITypes decodes their examples strictly into the
// k8s.io/api types instead, and the integration tests create them on a
// real API server (and validate every example there with a dry run).
var coreKinds = map[string]schema.GroupVersionKind{
	"cronjob":     {Group: "batch", Version: "v1", Kind: "CronJob"},
	"daemonset":   {Group: "apps", Version: "v1", Kind: "DaemonSet"},
	"deployment":  {Group: "apps", Version: "v1", Kind: "Deployment"},
	"job":         {Group: "batch", Version: "v1", Kind: "Job"},
	"pod":         {Version: "v1", Kind: "Pod"},
	"replicaset":  {Group: "apps", Version: "v1", Kind: "ReplicaSet"},
	"statefulset": {Group: "apps", Version: "v1", Kind: "StatefulSet"},
}

// operatorCRDs is every CRD of testdata/crds, and the made-up ones of the
// examples (examples/tutorial-trainjob/crd.yaml), loaded once for the
// package's tests (the load takes most of their time).
func operatorCRDs(t *testing.T) *schemacheck.Set {
	t.Helper()
	set, err := operatorCRDSet()
	require.NoError(t, err)
	return set
}

var operatorCRDSet = sync.OnceValues(func() (*schemacheck.Set, error) {
	files, err := filepath.Glob("testdata/crds/*/*.yaml")
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, errors.New("no CRD in testdata/crds")
	}
	made, err := filepath.Glob("../examples/*/crd.yaml")
	if err != nil {
		return nil, err
	}
	files = append(files, made...)
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		got, err := schemacheck.DecodeCRDs(data, f)
		if err != nil {
			return nil, err
		}
		crds = append(crds, got...)
	}
	return schemacheck.NewSet(crds...)
})

// builtinSchemaWarnings are what the schemas cannot decide about the
// built-ins, pinned so that a new warning is looked at. Knative keeps its
// scale in string annotations, which count when they hold digits. A
// TrainJob's pod labels and annotations merge every podTemplateOverride of
// a job (jq add of objects), which the check does not model; its runtime
// component's paths, read through the (Cluster)TrainingRuntime's schema,
// use reduce and functions of their own, which it does not model either.
// The AppWrapper's pod templates lie at paths its podSets name at run time
// inside preserve-unknown-fields templates: the Karta computes them, and
// the schema cannot follow.
var builtinSchemaWarnings = map[string][]string{
	"appwrapper": {
		"spec.structureDefinition.childComponents[0].specDefinition.podTemplateSpecPath: warning: cannot tell whether the path yields pod templates (objects with spec.containers): error/1 is not modelled (schema: workload.codeflare.dev/v1beta2 AppWrapper the object)",
		"spec.structureDefinition.childComponents[0].specDefinition.podTemplateSpecPath: warning: cannot tell whether the path yields pod templates (objects with spec.containers): an index the schema check cannot tell (schema: workload.codeflare.dev/v1beta2 AppWrapper the object)",
		"spec.structureDefinition.childComponents[0].specDefinition.podTemplateSpecPath: warning: cannot tell whether the path yields pod templates (objects with spec.containers): computed values are not checked (schema: workload.codeflare.dev/v1beta2 AppWrapper the object)",
		"spec.structureDefinition.childComponents[0].scaleDefinition.replicasPath: warning: cannot tell whether the path yields replica counts (integers, or int-or-string): computed values are not checked (schema: workload.codeflare.dev/v1beta2 AppWrapper the object)",
		"spec.structureDefinition.childComponents[0].instanceIdPath: warning: cannot tell whether the path yields instance ids (strings or integers): arithmetic on mixed types (schema: workload.codeflare.dev/v1beta2 AppWrapper the object)",
	},
	"knative-service": {
		"spec.structureDefinition.childComponents[0].scaleDefinition.replicasPath: warning: spec.template.metadata.annotations.* is a string; it counts as replicas only when it holds decimal digits (schema: serving.knative.dev/v1 Service spec.template.metadata.annotations.*)",
		"spec.structureDefinition.childComponents[0].scaleDefinition.minReplicasPath: warning: spec.template.metadata.annotations.* is a string; it counts as replicas only when it holds decimal digits (schema: serving.knative.dev/v1 Service spec.template.metadata.annotations.*)",
		"spec.structureDefinition.childComponents[0].scaleDefinition.maxReplicasPath: warning: spec.template.metadata.annotations.* is a string; it counts as replicas only when it holds decimal digits (schema: serving.knative.dev/v1 Service spec.template.metadata.annotations.*)",
	},
	"trainjob": {
		"spec.structureDefinition.childComponents[0].specDefinition.podTemplateSpecPath: warning: cannot tell whether the path yields pod templates (objects with spec.containers): onContainer/2 is not modelled (schema: trainer.kubeflow.org/v1alpha1 TrainJob the object)",
		"spec.structureDefinition.childComponents[0].specDefinition.podTemplateSpecPath: warning: cannot tell whether the path yields pod templates (objects with spec.containers): reduce is not modelled (schema: trainer.kubeflow.org/v1alpha1 TrainJob the object)",
		"spec.structureDefinition.childComponents[0].scaleDefinition.replicasPath: warning: cannot tell whether the path yields replica counts (integers, or int-or-string): arithmetic on mixed types (schema: trainer.kubeflow.org/v1alpha1 TrainJob the object)",
	},
}

// Every built-in Karta passes schema-aware validation against its
// operator's own CRD: no path the schema refutes, and only the pinned
// warnings.
func TestBuiltinsMatchTheirOperatorsCRDs(t *testing.T) {
	set := operatorCRDs(t)
	all, err := builtin.All()
	require.NoError(t, err)
	var unchecked []string
	for _, b := range all {
		t.Run(b.Name, func(t *testing.T) {
			gvk := b.Karta.Spec.StructureDefinition.RootComponent.Kind.GVK()
			if want, core := coreKinds[b.Name]; core {
				require.Equal(t, want, gvk)
				t.Skipf("%s is served natively by the API server: no CRD, no structural schema to check the Karta against (its examples are checked against the k8s.io/api types)", gvk)
			}
			s, err := set.Lookup(gvk)
			if errors.Is(err, schemacheck.ErrNoCRD) {
				unchecked = append(unchecked, b.Name)
				return
			}
			require.NoError(t, err, "the CRD has the version the Karta names")
			checked, err := karta.Check(b.Karta, interpreter.ValidateOptions())
			require.NoError(t, err)
			var refs []*schemacheck.Schema // the referenced kinds' schemas the set has
			for _, r := range b.Karta.Spec.References {
				if rs, err := set.Lookup(r.Kind.GVK()); err == nil {
					refs = append(refs, rs)
				}
			}
			var got []string
			for _, p := range schemacheck.Check(checked, s, refs...) {
				got = append(got, p.String())
			}
			assert.Equal(t, builtinSchemaWarnings[b.Name], got)
		})
	}
	sort.Strings(unchecked)
	assert.Equal(t, noPublishedCRD, unchecked, "the built-ins without a CRD in testdata/crds")
}

// Every example object is valid for its operator's CRD as the API server
// judges it: the schema's validation (apiextensions-apiserver's validator)
// passes, and pruning drops no field (a field the schema does not know
// would silently vanish on the way into the cluster).
func TestExamplesMatchTheirOperatorsCRDs(t *testing.T) {
	set := operatorCRDs(t)
	files, err := filepath.Glob("../examples/*/*.yaml")
	require.NoError(t, err)
	refs, err := filepath.Glob("../examples/*/refs/*.yaml") // the objects references read
	require.NoError(t, err)
	files = append(files, refs...)
	checked := 0
	for _, file := range files {
		base := filepath.Base(file)
		if !exampledir.IsState(base) || filepath.Base(filepath.Dir(file)) == "revisions" {
			continue // revision files (examples/revisions, revisions*.yaml) hold no objects
		}
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		docs, err := object.Decode(data, file)
		require.NoError(t, err)
		for _, doc := range object.Expand(docs) {
			kind, _ := doc.Object["kind"].(string)
			apiVersion, _ := doc.Object["apiVersion"].(string)
			if kind == "" || kind == "Karta" {
				continue
			}
			name := file + ": " + apiVersion + " " + kind
			if _, err := set.Lookup(schema.FromAPIVersionAndKind(apiVersion, kind)); errors.Is(err, schemacheck.ErrNoCRD) {
				continue
			}
			t.Run(strings.TrimPrefix(file, "../examples/"), func(t *testing.T) {
				assertMatchesCRD(t, set, name, doc.Object)
			})
			checked++
		}
	}
	assert.GreaterOrEqual(t, checked, 40, "the examples of the nine built-ins with CRDs, and the TrainJob, were found")
}

// assertMatchesCRD asserts that the API server would take obj as it is:
// its CRD's validation passes and pruning drops no field. It reports false,
// asserting nothing, when obj's kind has no CRD in set.
func assertMatchesCRD(t *testing.T, set *schemacheck.Set, name string, obj map[string]any) bool {
	t.Helper()
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	s, err := set.Lookup(schema.FromAPIVersionAndKind(apiVersion, kind))
	if errors.Is(err, schemacheck.ErrNoCRD) {
		return false
	}
	require.NoError(t, err, name)
	values := toAPIValues(t, obj)
	v, _, err := apiservervalidation.NewSchemaValidator(s.Internal)
	require.NoError(t, err)
	errs := apiservervalidation.ValidateCustomResource(field.NewPath(""), values, v)
	assert.Empty(t, errs.ToAggregate(), "%s: the API server would refuse it", name)
	pruned := pruning.PruneWithOptions(values, s.Structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	assert.Empty(t, pruned, "%s: the API server would drop these fields", name)
	return true
}

// toAPIValues converts a decoded object to the values the API server
// validates: int64 and float64 numbers, as its JSON decoder makes them.
func toAPIValues(t *testing.T, obj map[string]any) map[string]any {
	t.Helper()
	data, err := utiljson.Marshal(obj)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, utiljson.Unmarshal(data, &out))
	return out
}

// coreTypes are the k8s.io/api types of the kinds the core examples hold:
// the workloads, and the pods of pods.yaml.
var coreTypes = map[schema.GroupVersionKind]func() any{
	{Version: "v1", Kind: "Pod"}:                        func() any { return &corev1.Pod{} },
	{Group: "apps", Version: "v1", Kind: "Deployment"}:  func() any { return &appsv1.Deployment{} },
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"}:  func() any { return &appsv1.ReplicaSet{} },
	{Group: "apps", Version: "v1", Kind: "StatefulSet"}: func() any { return &appsv1.StatefulSet{} },
	{Group: "apps", Version: "v1", Kind: "DaemonSet"}:   func() any { return &appsv1.DaemonSet{} },
	{Group: "batch", Version: "v1", Kind: "Job"}:        func() any { return &batchv1.Job{} },
	{Group: "batch", Version: "v1", Kind: "CronJob"}:    func() any { return &batchv1.CronJob{} },
}

// Every object of the core kinds' examples (states, pods.yaml) decodes
// strictly into its k8s.io/api type: no field the API does not have (it
// would be dropped on the way into the cluster), no value of the wrong type.
// What the API server's validation adds is checked by the integration tests,
// which create every example with a dry run.
func TestCoreExamplesMatchTheAPITypes(t *testing.T) {
	checked := 0
	for name := range coreKinds {
		files, err := filepath.Glob(filepath.Join("..", "examples", name, "*.yaml"))
		require.NoError(t, err)
		for _, file := range files {
			if base := filepath.Base(file); strings.HasPrefix(base, "revisions") || base == kartatest.FileName {
				continue
			}
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			docs, err := object.Decode(data, file)
			require.NoError(t, err)
			for _, item := range object.Items(docs) {
				apiVersion, _ := item["apiVersion"].(string)
				kind, _ := item["kind"].(string)
				require.True(t, assertMatchesCoreType(t, file, item), "%s: %s %s is not a core workload kind or a Pod", file, apiVersion, kind)
				checked++
			}
		}
	}
	assert.GreaterOrEqual(t, checked, 50, "the core kinds' examples were found")
}

// assertMatchesCoreType asserts that item decodes strictly into its
// k8s.io/api type. It reports false, asserting nothing, when item is not of
// a core workload kind or a Pod.
func assertMatchesCoreType(t *testing.T, name string, item map[string]any) bool {
	t.Helper()
	apiVersion, _ := item["apiVersion"].(string)
	kind, _ := item["kind"].(string)
	newTyped, ok := coreTypes[schema.FromAPIVersionAndKind(apiVersion, kind)]
	if !ok {
		return false
	}
	js, err := json.Marshal(item)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	meta, _ := item["metadata"].(map[string]any)
	assert.NoError(t, dec.Decode(newTyped()), "%s: %s %s", name, kind, meta["name"])
	return true
}
