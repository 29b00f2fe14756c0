package gangoutput

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	evanjsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/podgroups"
)

var update = flag.Bool("update", false, "rewrite the golden files of the webhook tests")

// webhookEnv is a fake cluster with the workloads of the webhook's cases
// in the caches: the PyTorchJob, JobSet (and its Jobs), TrainJob and
// LeaderWorkerSet examples (with its StatefulSets and leader pods), and a
// Karta whose pod selector fails on a pod.
func webhookEnv(t testing.TB, target podgroups.Target, skip []schema.GroupKind) *env {
	t.Helper()
	e := newEnv(t)
	e.reg.Put(brokenKarta(t))
	e.start(target, Options{Skip: skip})
	e.jobSet()
	e.create(example(t, "pytorchjob", "running.yaml")[0])
	e.create(example(t, "tutorial-trainjob", "running.yaml")[0])
	lws := example(t, "leaderworkerset", "running.yaml")[0]
	e.create(lws)
	lwsPods := example(t, "leaderworkerset", "pods.yaml")
	leader := e.owner
	leader(statefulSetGVK, "inference", "vllm-llama3-405b", "b6132df5-405c-4779-8f93-5ba34744fe64", lws, lwsGVK)
	for _, p := range lwsPods {
		if p.GetName() == "vllm-llama3-405b-0" || p.GetName() == "vllm-llama3-405b-1" {
			e.create(p)
		}
	}
	e.owner(statefulSetGVK, "inference", "vllm-llama3-405b-0", "1bc81d6a-5969-4802-90ad-63deec402f1f", byName(lwsPods, "vllm-llama3-405b-0"), podGVK)
	// A Deployment of the JobSet's namespace, not a Karta'd workload.
	deploy := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "llama3-tensorboard", Namespace: jobSetNS, UID: "d0000000-0000-4000-8000-000000000002"}}
	e.owner(deploymentGVK, jobSetNS, deploy.Name, string(deploy.UID), nil, schema.GroupVersionKind{})
	e.owner(replicaSetGVK, jobSetNS, "llama3-tensorboard-6d9c7b8f5", "40fb47b2-44df-43c0-9fd8-154b86d4b380", deploy, deploymentGVK)
	broken := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Broken",
		"metadata": map[string]any{"name": "broken", "namespace": "ml", "uid": "b0000000-0000-4000-8000-000000000001"},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "w", "image": "w"}}}}}}}
	e.create(broken)
	// Everything is cached before a case asks.
	require.Eventually(t, func() bool {
		set := e.ctrl.kinds.Load()
		return set.Roots[lwsGVK.GroupKind()].Get("inference", lws.GetName()) != nil &&
			set.Owners[statefulSetGVK.GroupKind()].Get("inference", "vllm-llama3-405b-0") != nil &&
			set.Pods.Get("inference", "vllm-llama3-405b-0") != nil &&
			set.Roots[schema.GroupKind{Group: "example.com", Kind: "Broken"}].Get("ml", "broken") != nil &&
			set.Owners[jobGVK.GroupKind()].Get(jobSetNS, "llama3-pretrain-workers-1") != nil &&
			set.Owners[replicaSetGVK.GroupKind()].Get(jobSetNS, "llama3-tensorboard-6d9c7b8f5") != nil &&
			set.Owners[deploymentGVK.GroupKind()].Get(jobSetNS, "llama3-tensorboard") != nil
	}, waitFor, tick)
	return e
}

func byName(objs []*unstructured.Unstructured, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetName() == name {
			return o
		}
	}
	panic("no " + name)
}

// brokenKarta describes example.com/v1 Broken, whose pod selector runs
// out of its instruction budget (a hook error, not a mismatch).
func brokenKarta(t testing.TB) *interpreter.Program {
	t.Helper()
	ks, err := karta.Load([]byte(`apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: broken}
spec:
  structureDefinition:
    rootComponent:
      name: broken
      kind: {group: example.com, version: v1, kind: Broken}
      statusDefinition:
        statusMappings:
          running: [{byExpression: {expression: "true", expectedResult: "true"}}]
    childComponents:
    - name: worker
      ownerRef: broken
      specDefinition: {podTemplateSpecPath: .spec.template}
      podSelector:
        componentTypeSelector: {keyPath: '[.metadata.labels[] | ascii_downcase | explode | implode] | join(",")'}
  instructions:
    gangScheduling:
      podGroup:
        name: all
        subGroups: [{componentName: worker}]
`), "broken.yaml")
	require.NoError(t, err)
	p, err := interpreter.Compile(ks[0], interpreter.Options{Limits: interpreter.Limits{MaxInstructions: 50}})
	require.NoError(t, err)
	return p
}

// webhookCase is one admission review and what the webhook makes of it.
type webhookCase struct {
	name   string
	target podgroups.Target
	// skip is Options.Skip (nil: the target's default).
	skip []schema.GroupKind
	// pod is the pod created: examples/EXAMPLE/pods.yaml's NAME, edited.
	example, pod string
	edit         func(pod *unstructured.Unstructured, req *admissionv1.AdmissionRequest)
	result       string
	reason       string
}

var noSkip = []schema.GroupKind{}

func webhookCases() []webhookCase {
	asCreated := func(pod *unstructured.Unstructured, req *admissionv1.AdmissionRequest) {
		// As the Job controller creates it: generateName, no uid, no
		// namespace in the object (the request has it), no status.
		pod.SetName("")
		pod.SetNamespace("")
		pod.SetUID("")
		pod.SetResourceVersion("")
		delete(pod.Object, "status")
		req.Name = ""
	}
	return []webhookCase{
		{name: "pytorchjob-volcano-master", target: podgroups.Volcano, skip: noSkip, example: "pytorchjob", pod: "mistral-7b-sft-master-0", result: resultLinked},
		{name: "jobset-coscheduling-worker", target: podgroups.Coscheduling, example: "jobset", pod: "llama3-pretrain-workers-1-2-jzfnb", edit: asCreated, result: resultLinked},
		{name: "trainjob-kai-worker", target: podgroups.KAI, example: "tutorial-trainjob", pod: "llm-finetune-worker-2", edit: ownedByTrainJob, result: resultLinked},
		{name: "leaderworkerset-workload-api-worker", target: podgroups.WorkloadAPI, example: "leaderworkerset", pod: "vllm-llama3-405b-0-3", result: resultLinked},
		{name: "pytorchjob-volcano-skipped", target: podgroups.Volcano, example: "pytorchjob", pod: "mistral-7b-sft-worker-0", result: resultSkipped},
		{name: "jobset-volcano-already-linked", target: podgroups.Volcano, example: "jobset", pod: "llama3-pretrain-workers-0-0-7mrfl", result: resultAlreadyLinked},
		{name: "deployment-no-workload", target: podgroups.Volcano, example: "jobset", pod: "llama3-tensorboard-6d9c7b8f5-q2wzx", result: resultNoWorkload},
		{name: "pytorchjob-unmatched", target: podgroups.Coscheduling, skip: noSkip, example: "pytorchjob", pod: "mistral-7b-sft-worker-0", edit: func(pod *unstructured.Unstructured, _ *admissionv1.AdmissionRequest) {
			pod.SetLabels(map[string]string{"training.kubeflow.org/job-name": "mistral-7b-sft"})
		}, result: resultUnmatched},
		{name: "pytorchjob-update-ignored", target: podgroups.Coscheduling, skip: noSkip, example: "pytorchjob", pod: "mistral-7b-sft-worker-0", edit: func(_ *unstructured.Unstructured, req *admissionv1.AdmissionRequest) {
			req.Operation = admissionv1.Update
		}, result: resultIgnored},
		{name: "fail-open-unknown-workload", target: podgroups.Coscheduling, skip: noSkip, example: "pytorchjob", pod: "mistral-7b-sft-worker-0", edit: func(pod *unstructured.Unstructured, _ *admissionv1.AdmissionRequest) {
			refs := pod.GetOwnerReferences()
			refs[0].Name, refs[0].UID = "not-yet-cached", "00000000-0000-4000-8000-00000000c0de"
			pod.SetOwnerReferences(refs)
		}, result: resultFailOpen, reason: reasonUnknownWorkload},
		{name: "fail-open-owner-not-cached", target: podgroups.Coscheduling, example: "jobset", pod: "llama3-pretrain-workers-1-2-jzfnb", edit: func(pod *unstructured.Unstructured, _ *admissionv1.AdmissionRequest) {
			refs := pod.GetOwnerReferences()
			refs[0].Name, refs[0].UID = "llama3-pretrain-workers-2", "00000000-0000-4000-8000-00000000c0de"
			pod.SetOwnerReferences(refs)
		}, result: resultFailOpen, reason: reasonLookupFailed},
		{name: "fail-open-owner-unreadable", target: podgroups.Coscheduling, example: "jobset", pod: "llama3-pretrain-workers-1-2-jzfnb", edit: func(pod *unstructured.Unstructured, _ *admissionv1.AdmissionRequest) {
			yes := true
			pod.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "unreadable", UID: "00000000-0000-4000-8000-0000000000cf", Controller: &yes}})
		}, result: resultFailOpen, reason: reasonLookupFailed},
		{name: "fail-open-hook-error", target: podgroups.Coscheduling, example: "tutorial-trainjob", pod: "llm-finetune-worker-2", edit: func(pod *unstructured.Unstructured, _ *admissionv1.AdmissionRequest) {
			yes := true
			pod.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Broken", Name: "broken", UID: "b0000000-0000-4000-8000-000000000001", Controller: &yes}})
		}, result: resultFailOpen, reason: reasonHookError},
	}
}

// ownedByTrainJob gives a TrainJob's pod its controller reference (the
// example's pods have none).
func ownedByTrainJob(pod *unstructured.Unstructured, _ *admissionv1.AdmissionRequest) {
	yes := true
	pod.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "TrainJob", Name: "llm-finetune",
		UID: "3f6b2a90-7c1d-4e8f-a2b3-c4d5e6f7a8b9", Controller: &yes, BlockOwnerDeletion: &yes}})
}

// review is the AdmissionReview the API server sends for a case.
func (c webhookCase) review(t testing.TB) []byte {
	t.Helper()
	pod := byName(example(t, c.example, "pods.yaml"), c.pod).DeepCopy()
	req := &admissionv1.AdmissionRequest{
		UID:             types.UID("705ab4f5-6393-11e8-b7cc-42010a800002"),
		Kind:            metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Resource:        metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
		RequestKind:     &metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
		RequestResource: &metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
		Name:            pod.GetName(),
		Namespace:       pod.GetNamespace(),
		Operation:       admissionv1.Create,
		UserInfo:        authenticationv1.UserInfo{Username: "system:serviceaccount:kube-system:job-controller"},
	}
	if c.edit != nil {
		c.edit(pod, req)
	}
	raw, err := json.Marshal(pod.Object)
	require.NoError(t, err)
	req.Object = runtime.RawExtension{Raw: raw}
	opts, err := json.Marshal(map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"})
	require.NoError(t, err)
	req.Options = runtime.RawExtension{Raw: opts}
	out, err := json.MarshalIndent(&admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req}, "", "  ")
	require.NoError(t, err)
	return append(out, '\n')
}

// post sends a review to the webhook.
func post(t testing.TB, h http.Handler, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, WebhookPath+"?timeout=2s", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	return rec
}

// TestWebhook sends each case's AdmissionReview (testdata/webhook/
// NAME.request.json, written from the examples with -update) and compares
// the answer with NAME.golden.yaml: the result, the decoded JSON Patch and
// the AdmissionReview answered. Every pod is allowed; a linked pod gets
// the patch that podgroups.LinkPod computes, which applied to the pod
// links it as LinkOf reads it.
func TestWebhook(t *testing.T) {
	envs := map[string]*env{}
	for _, c := range webhookCases() {
		t.Run(c.name, func(t *testing.T) {
			envKey := string(c.target) + strings.Join(FormatKinds(c.skip), ",") + map[bool]string{true: "default"}[c.skip == nil]
			e := envs[envKey]
			if e == nil {
				e = webhookEnv(t, c.target, c.skip)
				envs[envKey] = e
			}
			if c.reason == reasonLookupFailed && strings.Contains(c.name, "unreadable") {
				e.meta.PrependReactor("get", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, errors.New("connection refused")
				})
			}
			reqPath := filepath.Join("testdata", "webhook", c.name+".request.json")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(reqPath), 0o755))
				require.NoError(t, os.WriteFile(reqPath, c.review(t), 0o644))
			}
			body, err := os.ReadFile(reqPath)
			require.NoError(t, err, "run go test ./gangoutput -run TestWebhook -update")
			before := testutil.ToFloat64(e.ctrl.metrics.admissions.WithLabelValues(c.result))

			rec := post(t, e.ctrl.Webhook(), body)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			var got admissionv1.AdmissionReview
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
			require.NotNil(t, got.Response)
			assert.True(t, got.Response.Allowed, "every pod is admitted")
			assert.Equal(t, types.UID("705ab4f5-6393-11e8-b7cc-42010a800002"), got.Response.UID)
			assert.Equal(t, before+1, testutil.ToFloat64(e.ctrl.metrics.admissions.WithLabelValues(c.result)), "result %s", c.result)
			if c.reason != "" {
				assert.GreaterOrEqual(t, testutil.ToFloat64(e.ctrl.metrics.failOpen.WithLabelValues(c.reason)), 1.0)
			}

			var patch any
			if c.result == resultLinked {
				require.NotNil(t, got.Response.PatchType)
				assert.Equal(t, admissionv1.PatchTypeJSONPatch, *got.Response.PatchType)
				require.NoError(t, json.Unmarshal(got.Response.Patch, &patch))
				var review admissionv1.AdmissionReview
				require.NoError(t, json.Unmarshal(body, &review))
				linked := appliedPatch(t, review.Request.Object.Raw, got.Response.Patch)
				name, ok := podgroups.LinkOf(c.target, linked)
				assert.True(t, ok, "the patched pod is linked")
				assert.NotEmpty(t, name)
			} else {
				assert.Nil(t, got.Response.Patch, "admitted unchanged")
			}
			golden, err := yaml.Marshal(map[string]any{"result": c.result, "reason": c.reason, "patch": patch, "response": json.RawMessage(rec.Body.Bytes())})
			require.NoError(t, err)
			checkGolden(t, filepath.Join("testdata", "webhook", c.name+".golden.yaml"), golden)
		})
	}
}

func decodePatch(patch []byte) (evanjsonpatch.Patch, error) { return evanjsonpatch.DecodePatch(patch) }

// appliedPatch applies a JSON Patch to a pod, as the API server does.
func appliedPatch(t *testing.T, pod, patch []byte) *unstructured.Unstructured {
	t.Helper()
	decoded, err := decodePatch(patch)
	require.NoError(t, err)
	out, err := decoded.Apply(pod)
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON(out))
	return u
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden %s: run go test ./gangoutput -run TestWebhook -update and review it", path)
	assert.Equal(t, string(want), string(got), "%s", path)
}

// A review the webhook cannot read is answered 400 and counted: the API
// server then admits the pod (failurePolicy Ignore).
func TestWebhookBadRequests(t *testing.T) {
	e := newEnv(t)
	c := e.start(podgroups.Coscheduling, Options{})
	cases := map[string]struct {
		method, body, want string
	}{
		"not JSON":     {http.MethodPost, "{", "decoding the review"},
		"another kind": {http.MethodPost, `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{}}`, `apiVersion "admission.k8s.io/v1beta1", kind "AdmissionReview": want admission.k8s.io/v1 AdmissionReview`},
		"no request":   {http.MethodPost, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, "the review has no request"},
		"GET":          {http.MethodGet, "", "method GET: POST an AdmissionReview"},
		"too large":    {http.MethodPost, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"object":"` + strings.Repeat("x", maxReviewBytes) + `"}}`, "reading the review"},
	}
	n := 0.0
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			c.Webhook().ServeHTTP(rec, httptest.NewRequest(tc.method, WebhookPath, strings.NewReader(tc.body)))
			assert.Equal(t, http.StatusBadRequest, rec.Code)
			assert.Contains(t, rec.Body.String(), tc.want)
			n++
			assert.Equal(t, n, testutil.ToFloat64(c.metrics.failOpen.WithLabelValues(reasonBadRequest)))
		})
	}
	// A pod object that is no JSON object: admitted unchanged.
	body := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","resource":{"version":"v1","resource":"pods"},"object":[1]}}`
	rec := post(t, c.Webhook(), []byte(body))
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), `"allowed":true`)
	assert.Equal(t, n+1, testutil.ToFloat64(c.metrics.failOpen.WithLabelValues(reasonBadRequest)))
}
