//go:build integration

package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/controller"
	"github.com/kartalua/karta/gangoutput"
	"github.com/kartalua/karta/internal/testenv"
	"github.com/kartalua/karta/internal/testobj"
	"github.com/kartalua/karta/podgroups"
)

var (
	jobSetGVR       = schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}
	volcanoGroupGVR = schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "podgroups"}
)

// karta controller --gang-output volcano --pod-webhook on the test
// cluster: the API server calls the pod webhook (a
// MutatingWebhookConfiguration for the test's namespace), the
// controller-manager's Job controller creates the pods of a JobSet's Jobs,
// each is linked to its group at creation, and the group's Volcano
// PodGroup is written, owned by the JobSet, and follows its scale. A Karta
// annotated karta.run.ai/gang-output: "false" turns it off (the PodGroup
// is deleted), and deleting that Karta turns it on again. The Workload
// API's objects meet kube-scheduler's gang scheduling in podgroups'
// TestIntegrationGangScheduling.
func TestIntegrationGangOutput(t *testing.T) {
	cfg := testenv.Config(t)
	testenv.InstallCRDs(t, cfg)
	ns := testenv.Namespace(t, cfg)
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	ctx := t.Context()
	testLabel := "karta.run.ai/test=" + ns

	dir := t.TempDir()
	certFile, keyFile, _ := selfSigned(t, dir)
	c := startController(t, "--kubeconfig", testenv.Kubeconfig(t), "--leader-elect=false",
		"-l", testLabel, "--gang-output", "volcano", "--gang-output-selector", testLabel, "--pod-webhook",
		"--health-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
		"--serve", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile)
	addrs, stderr := c.addrs, c.stderr

	// The API server sends the test namespace's pods to the webhook.
	ca, err := os.ReadFile(certFile)
	require.NoError(t, err)
	url := "https://" + addrs["the interpreter webhook"] + gangoutput.WebhookPath
	ignore, none, never := admissionregistrationv1.Ignore, admissionregistrationv1.SideEffectClassNone, admissionregistrationv1.NeverReinvocationPolicy
	timeout := int32(5)
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "karta-pods-" + ns},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    "pods.karta.run.ai",
			AdmissionReviewVersions: []string{"v1"},
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}},
			FailurePolicy:      &ignore,
			SideEffects:        &none,
			ReinvocationPolicy: &never,
			TimeoutSeconds:     &timeout,
			NamespaceSelector:  &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
		}},
	}
	_, err = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mwc, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(context.Background(), mwc.Name, metav1.DeleteOptions{})
	})

	// A JobSet of one replicated job of 2 pods; the test creates its Job
	// (no JobSet controller runs here), whose pods the Job controller makes.
	js := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(fmt.Sprintf(`
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: train, namespace: %s, labels: {karta.run.ai/test: %s}}
spec:
  replicatedJobs:
  - name: workers
    replicas: 1
    template:
      spec:
        parallelism: 2
        completions: 2
        template:
          spec:
            restartPolicy: Never
            schedulerName: volcano
            containers: [{name: train, image: registry.example.com/train:1, resources: {requests: {cpu: "2"}}}]
`, ns, ns)), &js.Object))
	js, err = dyn.Resource(jobSetGVR).Namespace(ns).Create(ctx, js, metav1.CreateOptions{})
	require.NoError(t, err)
	group := podgroups.ObjectName(podgroups.Volcano, fmt.Sprintf("pg-%s-jobset", js.GetUID()))
	yes := true
	parallelism, completions := int32(2), int32(2)
	_, err = cs.BatchV1().Jobs(ns).Create(ctx, jobFor(js, &yes, parallelism, completions), metav1.CreateOptions{})
	require.NoError(t, err)

	podGroups := dyn.Resource(volcanoGroupGVR).Namespace(ns)
	var pg *unstructured.Unstructured
	require.Eventually(t, func() bool {
		pg, err = podGroups.Get(ctx, group, metav1.GetOptions{})
		return err == nil
	}, 2*time.Minute, 100*time.Millisecond, "PodGroup %s; stderr: %s", group, stderr.String())
	assert.Equal(t, []metav1.OwnerReference{{APIVersion: "jobset.x-k8s.io/v1alpha2", Kind: "JobSet", Name: "train", UID: js.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}}, pg.GetOwnerReferences())
	assert.Equal(t, "karta", pg.GetLabels()[podgroups.ManagedByLabel])
	minMember := func() int64 {
		pg, err := podGroups.Get(ctx, group, metav1.GetOptions{})
		if err != nil {
			return -1
		}
		n, _, _ := unstructured.NestedInt64(pg.Object, "spec", "minMember")
		return n
	}
	assert.Equal(t, int64(2), minMember())
	assert.Equal(t, map[string]any{"cpu": "4"}, pg.Object["spec"].(map[string]any)["minResources"])

	// Each pod was linked as it was created (the field manager of the
	// annotations is the Job controller's create, mutated by the webhook).
	require.Eventually(t, func() bool {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=train-workers-0"})
		return err == nil && len(pods.Items) == 2
	}, 2*time.Minute, 100*time.Millisecond)
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=train-workers-0"})
	require.NoError(t, err)
	for _, p := range pods.Items {
		assert.Equal(t, group, p.Annotations["scheduling.k8s.io/group-name"], "pod %s", p.Name)
		assert.Equal(t, "replicatedjob-workers-replica-0", p.Annotations["volcano.sh/task-spec"], "pod %s", p.Name)
	}
	// A pod of no workload is admitted unchanged.
	bare, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bare"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example.com/c:1"}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Empty(t, bare.Annotations)

	// Scaled: the PodGroup follows. Parallelism alone would not do: the
	// Job controller never runs more than min(parallelism, completions).
	patch := []byte(`[{"op":"replace","path":"/spec/replicatedJobs/0/template/spec/parallelism","value":3},` +
		`{"op":"replace","path":"/spec/replicatedJobs/0/template/spec/completions","value":3}]`)
	_, err = dyn.Resource(jobSetGVR).Namespace(ns).Patch(ctx, "train", types.JSONPatchType, patch, metav1.PatchOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return minMember() == 3 }, time.Minute, 100*time.Millisecond, "minMember 3")

	// The JobSet tells what was written.
	require.Eventually(t, func() bool {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=train,reason=" + gangoutput.ReasonWritten})
		return err == nil && len(evs.Items) > 0 && strings.Contains(evs.Items[0].Message, "PodGroup/"+group)
	}, time.Minute, 100*time.Millisecond)

	// A Karta of the kind with the switch off: the PodGroup goes.
	off := builtinKartaObject(t, "jobset")
	off.SetName(ns + "-jobset-off")
	off.SetLabels(map[string]string{"karta.run.ai/test": ns})
	off.SetAnnotations(map[string]string{gangoutput.SwitchAnnotation: "false"})
	kartas := dyn.Resource(controller.KartaResource)
	_, err = kartas.Create(ctx, off, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kartas.Delete(context.Background(), off.GetName(), metav1.DeleteOptions{}) })
	require.Eventually(t, func() bool { return minMember() == -1 }, time.Minute, 100*time.Millisecond, "deleted; stderr: %s", stderr.String())
	// Gone with it: the built-in is back, and so is the PodGroup.
	require.NoError(t, kartas.Delete(ctx, off.GetName(), metav1.DeleteOptions{}))
	require.Eventually(t, func() bool { return minMember() == 3 }, time.Minute, 100*time.Millisecond, "written again")

	// The controller counts a write when the API server has answered it,
	// which may be after the test has seen the object.
	metrics := waitMetrics(t, func() string { _, m := httpGet(addrs["metrics"], "/metrics"); return m },
		`karta_gang_output_writes_total{kind="PodGroup",operation="create"} 2`,
		`karta_gang_output_writes_total{kind="PodGroup",operation="delete"} 1`,
		`karta_pod_webhook_admissions_total{result="linked"} `,
		`karta_pod_webhook_admissions_total{result="no_workload"} `,
		"karta_gang_output_synced 1",
		`karta_gang_output_watched_kinds{role="workload"} `,
	)
	assert.NotContains(t, metrics, `karta_pod_webhook_admissions_total{result="linked"} 0`)
}

// jobFor is the Job the JobSet controller would make for replicated job
// "workers", index 0: owned by the JobSet, its pods labelled as JobSet's
// are (the job index puts them in the replica's leaf subgroup).
func jobFor(js *unstructured.Unstructured, yes *bool, parallelism, completions int32) *batchv1.Job {
	labels := map[string]string{"jobset.sigs.k8s.io/jobset-name": js.GetName(), "jobset.sigs.k8s.io/replicatedjob-name": "workers",
		"jobset.sigs.k8s.io/job-index": "0"}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: js.GetName() + "-workers-0", Namespace: js.GetNamespace(), Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: js.GetAPIVersion(), Kind: js.GetKind(), Name: js.GetName(), UID: js.GetUID(), Controller: yes, BlockOwnerDeletion: yes}}},
		Spec: batchv1.JobSpec{Parallelism: &parallelism, Completions: &completions,
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, SchedulerName: "volcano",
				Containers: []corev1.Container{{Name: "train", Image: "registry.example.com/train:1",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}},
			}}},
	}
}

// builtinKartaObject is a built-in Karta as a cluster object.
func builtinKartaObject(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	obj := testobj.Read(t, "../../builtin/kartas/"+name+".yaml")
	obj.SetResourceVersion("")
	return obj
}
