package gangoutput

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/podgroups"
)

// A hierarchical gang (examples/kartas/trainjob-nested.yaml: the
// launcher, and the workers nesting a leaf per pair) with the Workload
// API's CompositePodGroups: the controller writes the Workload, the
// CompositePodGroups and a PodGroup per leaf, and the pod webhook links a
// new worker to its pair's PodGroup, as podgroups.Build links it.
func TestCompositePodGroups(t *testing.T) {
	const group = "pg-3f6b2a90-7c1d-4e8f-a2b3-c4d5e6f7a8b9-gang"
	e := nestedTrainJobEnv(t, podgroups.WorkloadAPI, podgroups.Options{CompositePodGroup: true})

	e.waitObjects(workloadGVK, "ml", "llm-finetune")
	cpgGVK := (podgroups.Options{CompositePodGroup: true}).Kinds(podgroups.WorkloadAPI)[1]
	require.Equal(t, "CompositePodGroup", cpgGVK.Kind)
	cpgs := e.waitObjects(cpgGVK, "ml", group, group+"-worker")
	assert.Equal(t, int64(2), nestedInt64(cpgs[group+"-worker"], "spec", "schedulingPolicy", "gang", "minGroupCount"))
	pgs := e.waitObjects(workloadPGGVK, "ml", group+"-launcher", group+"-worker-0", group+"-worker-1")
	assert.Equal(t, int64(2), nestedInt64(pgs[group+"-worker-1"], "spec", "schedulingPolicy", "gang", "minCount"))

	name, ok := podgroups.LinkOf(podgroups.WorkloadAPI, linkNewWorker(t, e, podgroups.WorkloadAPI))
	require.True(t, ok)
	assert.Equal(t, group+"-worker-1", name, "the pod's leaf PodGroup: the second pair's")
}

// The same tree for Volcano with the VolcanoSubGroupPolicy option
// (--gang-output-volcano-subgroup-policy): the controller writes one
// PodGroup whose subGroupPolicy holds the workers' pairs (a Volcano
// subgroup per pair, both needed) beside the launcher's task, and the pod
// webhook gives a new worker the labels that policy selects on, as
// podgroups.Build does.
func TestVolcanoSubGroupPolicy(t *testing.T) {
	const group = "pg-3f6b2a90-7c1d-4e8f-a2b3-c4d5e6f7a8b9-gang"
	e := nestedTrainJobEnv(t, podgroups.Volcano, podgroups.Options{VolcanoSubGroupPolicy: true})

	pg := e.waitObjects(volcanoPGGVK, "ml", group)[group]
	tasks, _, _ := unstructured.NestedMap(pg.Object, "spec", "minTaskMember")
	assert.Equal(t, map[string]any{"launcher": int64(1)}, tasks)
	policies, _, _ := unstructured.NestedSlice(pg.Object, "spec", "subGroupPolicy")
	assert.Equal(t, []any{map[string]any{
		"name": "worker", "subGroupSize": int64(2), "minSubGroups": int64(2),
		"labelSelector":  map[string]any{"matchLabels": map[string]any{podgroups.VolcanoParentLabel: "worker"}},
		"matchLabelKeys": []any{podgroups.VolcanoTaskAnnotation},
	}}, policies)

	pod := linkNewWorker(t, e, podgroups.Volcano)
	name, ok := podgroups.LinkOf(podgroups.Volcano, pod)
	require.True(t, ok)
	assert.Equal(t, group, name)
	assert.Equal(t, "worker-1", pod.GetAnnotations()[podgroups.VolcanoTaskAnnotation], "the task is the pod's pair")
	assert.Equal(t, "worker-1", pod.GetLabels()[podgroups.VolcanoTaskAnnotation], "the policy groups by the pair's label")
	assert.Equal(t, "worker", pod.GetLabels()[podgroups.VolcanoParentLabel], "the policy selects the workers' pairs")
}

// linkNewWorker sends the pod webhook the creation of the nested
// TrainJob's third worker (with generateName) and returns the pod with the
// webhook's patch applied; the webhook must link it.
func linkNewWorker(t *testing.T, e *env, target podgroups.Target) *unstructured.Unstructured {
	t.Helper()
	c := webhookCase{target: target, example: "tutorial-trainjob", pod: "llm-finetune-worker-2", edit: func(pod *unstructured.Unstructured, req *admissionv1.AdmissionRequest) {
		ownedByTrainJob(pod, req)
		pod.SetName("") // created with generateName
		req.Name = ""
	}}
	body := c.review(t)
	rec := post(t, e.ctrl.Webhook(), body)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var got admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	require.NotNil(t, got.Response)
	require.NotNil(t, got.Response.Patch, "linked: %s", got.Response.Result)
	var review admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(body, &review))
	return appliedPatch(t, review.Request.Object.Raw, got.Response.Patch)
}

// nestedTrainJobEnv runs the controller for target with build, the
// tutorial TrainJob's Karta replaced by examples/kartas/trainjob-nested.yaml,
// and creates the TrainJob.
func nestedTrainJobEnv(t *testing.T, target podgroups.Target, build podgroups.Options) *env {
	t.Helper()
	e := newEnv(t)
	ks, err := karta.LoadFile("../examples/kartas/trainjob-nested.yaml")
	require.NoError(t, err)
	p, err := interpreter.Compile(ks[0], interpreter.Options{})
	require.NoError(t, err)
	e.reg.Put(p) // in the TrainJob's place
	e.start(target, Options{Build: build})
	e.create(example(t, "tutorial-trainjob", "running.yaml")[0])
	return e
}
