//go:build integration

package testenv_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/internal/testenv"
)

// podTimeout bounds waits for controllers, the scheduler and kwok; a bound
// on a wait, not a timing assertion.
const podTimeout = 2 * time.Minute

func restMapper(t *testing.T, cfg *rest.Config) *restmapper.DeferredDiscoveryRESTMapper {
	t.Helper()
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	require.NoError(t, err)
	return restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
}

// readExample decodes examples/NAME/running.yaml, a real object of the kind.
func readExample(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", name, "running.yaml"))
	require.NoError(t, err)
	js, err := yaml.YAMLToJSON(data)
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON(js))
	return u
}

// fresh keeps what a user submits: name, labels, annotations and spec.
// Finalizers go too: no operator runs here to remove them.
func fresh(example *unstructured.Unstructured, namespace string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": example.GetAPIVersion(),
		"kind":       example.GetKind(),
		"spec":       example.Object["spec"],
	}}
	u.SetName(example.GetName())
	u.SetNamespace(namespace)
	u.SetLabels(example.GetLabels())
	u.SetAnnotations(example.GetAnnotations())
	return u
}

// TestBuiltinKindsRoundTrip creates one real object of every built-in kind
// and sets its status through the status subresource, as an operator would.
// The API server's own kinds are not played so: the server defaults their
// specs, and their controllers, which the test cluster runs, write their
// status (cluster's and cmd/karta's integration tests run them).
func TestBuiltinKindsRoundTrip(t *testing.T) {
	cfg := testenv.Config(t)
	testenv.InstallCRDs(t, cfg)
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	mapper := restMapper(t, cfg)

	all, err := builtin.All()
	require.NoError(t, err)
	for _, b := range all {
		t.Run(b.Name, func(t *testing.T) {
			gvk := b.Karta.Spec.StructureDefinition.RootComponent.Kind.GVK()
			if !strings.Contains(gvk.Group, ".") {
				t.Skipf("%s is the API server's own: its controllers, not this test, write its status", gvk)
			}
			ctx := t.Context()
			ns := testenv.Namespace(t, cfg)
			example := readExample(t, b.Name)
			require.Equal(t, gvk, example.GroupVersionKind(), "example and Karta disagree on the kind")
			mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			require.NoError(t, err)
			require.Equal(t, "namespace", string(mapping.Scope.Name()))
			res := dyn.Resource(mapping.Resource).Namespace(ns)

			withStatus := fresh(example, ns)
			withStatus.Object["status"] = example.Object["status"]
			created, err := res.Create(ctx, withStatus, metav1.CreateOptions{})
			require.NoError(t, err)
			assert.Equal(t, example.Object["spec"], created.Object["spec"], "spec must survive unchanged")
			assert.NotContains(t, created.Object, "status", "with a status subresource, create drops status")

			require.NotNil(t, example.Object["status"], "example has a status to set")
			created.Object["status"] = example.Object["status"]
			_, err = res.UpdateStatus(ctx, created, metav1.UpdateOptions{})
			require.NoError(t, err)

			got, err := res.Get(ctx, example.GetName(), metav1.GetOptions{})
			require.NoError(t, err)
			assert.Equal(t, example.Object["status"], got.Object["status"])
			assert.Equal(t, example.Object["spec"], got.Object["spec"])
			assert.Equal(t, created.GetGeneration(), got.GetGeneration(), "a status update must not bump the generation")
		})
	}
}

// TestBuiltinKindsServed checks every kind a built-in names (children and
// additional child kinds included) is served, Kubernetes' own and CRDs alike.
func TestBuiltinKindsServed(t *testing.T) {
	cfg := testenv.Config(t)
	testenv.InstallCRDs(t, cfg)
	mapper := restMapper(t, cfg)
	all, err := builtin.All()
	require.NoError(t, err)
	for _, b := range all {
		sd := b.Karta.Spec.StructureDefinition
		var gvks []schema.GroupVersionKind
		for _, c := range sd.Components() {
			if c.Kind != nil {
				gvks = append(gvks, c.Kind.GVK())
			}
		}
		for _, k := range sd.AdditionalChildKinds {
			gvks = append(gvks, k.GVK())
		}
		for _, gvk := range gvks {
			_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			assert.NoError(t, err, "built-in %s: %s", b.Name, gvk)
		}
	}
}

// TestInstallCRDsIsIdempotent installs twice: tests of several packages all
// call InstallCRDs against one cluster.
func TestInstallCRDsIsIdempotent(t *testing.T) {
	cfg := testenv.Config(t)
	testenv.InstallCRDs(t, cfg)
	testenv.InstallCRDs(t, cfg)
}

// TestPodRunsOnFakeNode: the scheduler binds a pod to the kwok node it
// selects and kwok reports it Running.
func TestPodRunsOnFakeNode(t *testing.T) {
	cfg := testenv.Config(t)
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	ns := testenv.Namespace(t, cfg)
	node := testenv.FakeNode(t, cfg)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "trainer-0", Labels: map[string]string{"app": "trainer"}},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{corev1.LabelHostname: node},
			Containers: []corev1.Container{{
				Name:  "trainer",
				Image: "nvcr.io/nvidia/pytorch:24.08-py3",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
					"nvidia.com/gpu": resource.MustParse("1"),
				}},
			}},
		},
	}
	_, err = cs.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{})
	require.NoError(t, err)

	var got *corev1.Pod
	err = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, podTimeout, true, func(ctx context.Context) (bool, error) {
		got, err = cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		// kwok may report the phase before the Ready condition, in
		// separate status writes: wait for both.
		return got.Status.Phase == corev1.PodRunning && podReady(got), nil
	})
	require.NoError(t, err, "pod never Running and Ready (kwok marks running pods Ready); last seen: %s", describePod(got))
	assert.Equal(t, node, got.Spec.NodeName)
}

// TestJobCompletes: the Job controller creates the pod, the scheduler binds
// it, kwok runs it to completion and the Job controller marks the Job
// Complete — the whole chain a workload controller's tests rely on.
func TestJobCompletes(t *testing.T) {
	cfg := testenv.Config(t)
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	ns := testenv.Namespace(t, cfg)
	testenv.FakeNode(t, cfg)

	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "preprocess"},
		Spec: batchv1.JobSpec{
			Completions:  int32Ptr(2),
			Parallelism:  int32Ptr(2),
			BackoffLimit: int32Ptr(0),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "preprocess", Image: "python:3.12-slim", Command: []string{"python", "prep.py"}}},
			}},
		},
	}
	_, err = cs.BatchV1().Jobs(ns).Create(t.Context(), job, metav1.CreateOptions{})
	require.NoError(t, err)

	var got *batchv1.Job
	err = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, podTimeout, true, func(ctx context.Context) (bool, error) {
		got, err = cs.BatchV1().Jobs(ns).Get(ctx, job.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
				return false, fmt.Errorf("job failed: %s: %s", c.Reason, c.Message)
			}
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	require.NoError(t, err, "job never Complete; last seen: %s", describeJob(got))
	assert.Equal(t, int32(2), got.Status.Succeeded)
}

func int32Ptr(v int32) *int32 { return &v }

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// describePod and describeJob summarise the last state seen by a failed
// wait (nil when the object was never read).
func describePod(p *corev1.Pod) string {
	if p == nil {
		return "<not read>"
	}
	return fmt.Sprintf("node=%q phase=%s conditions=%+v", p.Spec.NodeName, p.Status.Phase, p.Status.Conditions)
}

func describeJob(j *batchv1.Job) string {
	if j == nil {
		return "<not read>"
	}
	return fmt.Sprintf("active=%d succeeded=%d failed=%d conditions=%+v", j.Status.Active, j.Status.Succeeded, j.Status.Failed, j.Status.Conditions)
}
