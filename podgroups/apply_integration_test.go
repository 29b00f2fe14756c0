//go:build integration

package podgroups_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/kartalua/karta/internal/testenv"
	"github.com/kartalua/karta/podgroups"
)

// clients are the test cluster's clients.
type clients struct {
	dyn    dynamic.Interface
	cs     kubernetes.Interface
	mapper meta.RESTMapper
}

func connect(t *testing.T, cfg *rest.Config) clients {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	require.NoError(t, err)
	return clients{dyn: dyn, cs: cs, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}
}

// create creates obj in its namespace, validated strictly by the API
// server (unknown and duplicate fields refused); dryRun leaves nothing.
func (c clients) create(t *testing.T, obj *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error) {
	t.Helper()
	m, err := c.mapper.RESTMapping(obj.GroupVersionKind().GroupKind(), obj.GroupVersionKind().Version)
	require.NoError(t, err, "the cluster serves %s", obj.GroupVersionKind())
	opts := metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return c.dyn.Resource(m.Resource).Namespace(obj.GetNamespace()).Create(context.Background(), obj, opts)
}

// inNamespace moves an example's workload and pods to ns, as objects a
// user submits: no uid, resourceVersion or status; pods keep their
// labels, annotations, owners (which name their groups) and spec, and
// lose their node.
func inNamespace(ex example, ns string) (*unstructured.Unstructured, []*unstructured.Unstructured) {
	obj := ex.obj.DeepCopy()
	obj.SetNamespace(ns)
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"} {
		unstructured.RemoveNestedField(obj.Object, "metadata", f)
	}
	delete(obj.Object, "status")
	pods := make([]*unstructured.Unstructured, len(ex.pods))
	for i, p := range ex.pods {
		pods[i] = submittedPod(p, ns)
	}
	return obj, pods
}

func submittedPod(p *unstructured.Unstructured, ns string) *unstructured.Unstructured {
	pod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": p.Object["spec"]}}
	pod = pod.DeepCopy()
	pod.SetName(p.GetName())
	pod.SetNamespace(ns)
	pod.SetLabels(p.GetLabels())
	pod.SetAnnotations(p.GetAnnotations())
	pod.SetOwnerReferences(p.GetOwnerReferences())
	// What admission would refuse for want of objects the test cluster
	// lacks (a service account, a priority class, a runtime class): not
	// the test's point.
	for _, f := range []string{"nodeName", "serviceAccountName", "serviceAccount", "priorityClassName", "priority", "runtimeClassName", "overhead"} {
		unstructured.RemoveNestedField(pod.Object, "spec", f)
	}
	return pod
}

// linked is pod with its link to its group applied, as the pod webhook
// answers at its creation.
func linked(t *testing.T, pod *unstructured.Unstructured, res *podgroups.Result) *unstructured.Unstructured {
	t.Helper()
	for _, l := range res.Links {
		if l.Pod != pod.GetNamespace()+"/"+pod.GetName() || len(l.Patch) == 0 {
			continue
		}
		doc, err := json.Marshal(pod.Object)
		require.NoError(t, err)
		raw, err := json.Marshal(l.Patch)
		require.NoError(t, err)
		patch, err := jsonpatch.DecodePatch(raw)
		require.NoError(t, err)
		out, err := patch.Apply(doc)
		require.NoError(t, err)
		u := &unstructured.Unstructured{}
		require.NoError(t, u.UnmarshalJSON(out))
		return u
	}
	return pod
}

// Every object `karta podgroups` writes for every built-in's example, for
// every target, is accepted by the API server with strict field
// validation: the Workload API's by kube-apiserver itself, the others by
// the schedulers' CRDs (internal/testenv/crds: Volcano's and
// scheduler-plugins' from their published API types and manifests, KAI's
// a stand-in). So is every pod with its link.
func TestIntegrationObjectsValidate(t *testing.T) {
	cfg := testenv.Config(t)
	testenv.InstallCRDs(t, cfg)
	ns := testenv.Namespace(t, cfg)
	c := connect(t, cfg)
	for _, ex := range examples(t) {
		obj, pods := inNamespace(ex, ns)
		for _, target := range podgroups.Targets() {
			t.Run(ex.name+"/"+string(target), func(t *testing.T) {
				res, err := podgroups.ForProgram(context.Background(), ex.p, obj, pods, target, podgroups.Options{})
				require.NoError(t, err)
				require.NotEmpty(t, res.Objects)
				for _, o := range res.Objects {
					_, err := c.create(t, o, true)
					assert.NoError(t, err, "%s %s", o.GetKind(), o.GetName())
				}
				for _, pod := range pods {
					_, err := c.create(t, linked(t, pod, res), true)
					assert.NoError(t, err, "pod %s", pod.GetName())
				}
			})
		}
	}
}

// gangCase is a workload submitted with the Workload API's objects and its
// pods linked to them, as karta's controller and pod webhook do it.
type gangCase struct {
	c    clients
	ns   string
	obj  *unstructured.Unstructured
	pods []*unstructured.Unstructured
}

// submit creates the workload (for its uid, the Workload's owner), the
// Workload and PodGroups, then the linked pods, each with resources.
func (g *gangCase) submit(t *testing.T, ex example, resources corev1.ResourceList) {
	t.Helper()
	obj, pods := inNamespace(ex, g.ns)
	created, err := g.c.create(t, obj, false)
	require.NoError(t, err)
	res, err := podgroups.ForProgram(context.Background(), ex.p, created, pods, podgroups.WorkloadAPI, podgroups.Options{})
	require.NoError(t, err)
	for _, o := range res.Objects {
		_, err := g.c.create(t, o, false)
		require.NoError(t, err, "%s %s", o.GetKind(), o.GetName())
	}
	// The gang's pods: the example's other pods (a tensorboard, an
	// evaluation pod of the namespace) are in no group.
	inGroup := map[string]bool{}
	for _, l := range res.Links {
		inGroup[l.Pod] = true
	}
	for _, pod := range pods {
		if !inGroup[pod.GetNamespace()+"/"+pod.GetName()] {
			continue
		}
		p := linked(t, pod, res)
		setResources(t, p, resources)
		// Their owners do not exist here: the garbage collector would
		// delete the pods.
		p.SetOwnerReferences(nil)
		_, err := g.c.create(t, p, false)
		require.NoError(t, err, "pod %s", p.GetName())
		g.pods = append(g.pods, p)
	}
	require.NotEmpty(t, g.pods)
	g.obj = created
}

// setResources gives every container of pod the same requests and limits,
// and drops what would keep it from the fake nodes (node selectors,
// affinities, tolerations are kept: the nodes have no taints).
func setResources(t *testing.T, pod *unstructured.Unstructured, rl corev1.ResourceList) {
	t.Helper()
	list := map[string]any{}
	for k, v := range rl {
		list[string(k)] = v.String()
	}
	containers, _, _ := unstructured.NestedSlice(pod.Object, "spec", "containers")
	for i := range containers {
		c := containers[i].(map[string]any)
		c["resources"] = map[string]any{"requests": list, "limits": list}
	}
	require.NoError(t, unstructured.SetNestedSlice(pod.Object, containers, "spec", "containers"))
	for _, f := range []string{"nodeSelector", "affinity", "initContainers", "volumes", "schedulerName"} {
		unstructured.RemoveNestedField(pod.Object, "spec", f)
	}
	containers, _, _ = unstructured.NestedSlice(pod.Object, "spec", "containers")
	for i := range containers {
		delete(containers[i].(map[string]any), "volumeMounts")
	}
	require.NoError(t, unstructured.SetNestedSlice(pod.Object, containers, "spec", "containers"))
}

// bound reports how many of the case's pods have a node.
func (g *gangCase) bound(t *testing.T) (int, string) {
	t.Helper()
	n := 0
	var where []string
	for _, p := range g.pods {
		pod, err := g.c.cs.CoreV1().Pods(g.ns).Get(context.Background(), p.GetName(), metav1.GetOptions{})
		require.NoError(t, err)
		if pod.Spec.NodeName != "" {
			n++
		}
		where = append(where, fmt.Sprintf("%s→%q", pod.Name, pod.Spec.NodeName))
	}
	return n, strings.Join(where, " ")
}

// Kubernetes' own gang scheduling, on kube-scheduler with the
// GenericWorkload gate and the kwok nodes (2 × 8 GPUs): the Workload API
// objects karta writes for a PyTorchJob and a JobSet make the scheduler
// bind each gang all together; a PyTorchJob whose gang cannot fit (4 pods
// of 5 GPUs: two would fit, one per node) stays entirely Pending, no pod
// bound; and a Deployment, no gang, schedules as usual beside them.
func TestIntegrationGangScheduling(t *testing.T) {
	cfg := testenv.Config(t)
	testenv.InstallCRDs(t, cfg)
	testenv.FakeNode(t, cfg)
	c := connect(t, cfg)
	byName := map[string]example{}
	for _, ex := range examples(t) {
		byName[ex.name] = ex
	}
	small := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}
	wait := 90 * time.Second

	for _, name := range []string{"pytorchjob", "jobset"} {
		t.Run(name+" fits: bound all together", func(t *testing.T) {
			g := &gangCase{c: c, ns: testenv.Namespace(t, cfg)}
			g.submit(t, byName[name], small)
			require.Eventually(t, func() bool { n, _ := g.bound(t); return n == len(g.pods) }, wait, 250*time.Millisecond,
				"every pod of the gang is bound")
		})
	}

	t.Run("pytorchjob does not fit: nothing bound", func(t *testing.T) {
		g := &gangCase{c: c, ns: testenv.Namespace(t, cfg)}
		g.submit(t, byName["pytorchjob"], corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), "nvidia.com/gpu": resource.MustParse("5")})
		require.Len(t, g.pods, 4, "the example's master and three workers")
		// The scheduler tries the gang: every pod is marked unschedulable,
		// none is bound.
		require.Eventually(t, func() bool {
			for _, p := range g.pods {
				pod, err := c.cs.CoreV1().Pods(g.ns).Get(context.Background(), p.GetName(), metav1.GetOptions{})
				require.NoError(t, err)
				if !scheduledFalse(pod) {
					return false
				}
			}
			return true
		}, wait, 250*time.Millisecond, "the scheduler has tried every pod of the gang")
		assert.Never(t, func() bool { n, _ := g.bound(t); return n > 0 }, 5*time.Second, 250*time.Millisecond,
			"no pod of a gang that cannot fit is bound")
		n, where := g.bound(t)
		assert.Zero(t, n, where)
	})

	t.Run("deployment, no gang: scheduled as usual", func(t *testing.T) {
		ns := testenv.Namespace(t, cfg)
		two := int32(2)
		labels := map[string]string{"app": "web"}
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
			Spec: appsv1.DeploymentSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "web", Image: "nginx", Resources: corev1.ResourceRequirements{Requests: small}}}}}},
		}
		_, err := c.cs.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			pods, err := c.cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=web"})
			require.NoError(t, err)
			n := 0
			for _, p := range pods.Items {
				if p.Spec.NodeName != "" {
					n++
				}
			}
			return n == 2
		}, wait, 250*time.Millisecond, "the Deployment's pods are bound")
	})
}

// scheduledFalse: the scheduler has tried the pod and could not place it.
func scheduledFalse(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return true
		}
	}
	return false
}
