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
	"github.com/kartalua/karta/interpreter"
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
// a stand-in), and so are the Workload API's CompositePodGroups and
// Volcano's subGroupPolicy. So is every pod with its link.
func TestIntegrationObjectsValidate(t *testing.T) {
	cfg := testenv.Config(t)
	testenv.InstallCRDs(t, cfg)
	ns := testenv.Namespace(t, cfg)
	c := connect(t, cfg)
	for _, ex := range examples(t) {
		obj, pods := inNamespace(ex, ns)
		type variant struct {
			target podgroups.Target
			opts   podgroups.Options
			name   string
		}
		var variants []variant
		for _, target := range podgroups.Targets() {
			variants = append(variants, variant{target, podgroups.Options{}, string(target)})
		}
		// With the CompositePodGroup gate (a group with subgroups is a tree).
		variants = append(variants, variant{podgroups.WorkloadAPI, podgroups.Options{CompositePodGroup: true}, "workload-api-composite"})
		// With Volcano's subgroup policies (its v1.14 CRD has the field).
		variants = append(variants, variant{podgroups.Volcano, podgroups.Options{VolcanoSubGroupPolicy: true}, "volcano-subgroup-policy"})
		for _, v := range variants {
			target := v.target
			t.Run(ex.name+"/"+v.name, func(t *testing.T) {
				res, err := podgroups.ForProgram(ex.ctx(), ex.p, obj, pods, target, v.opts)
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
	g.submitBuilt(t, ex, resources, func(created *unstructured.Unstructured, pods []*unstructured.Unstructured) (*podgroups.Result, error) {
		return podgroups.ForProgram(ex.ctx(), ex.p, created, pods, podgroups.WorkloadAPI, podgroups.Options{})
	})
}

// submitBuilt is submit with the objects build makes for the created
// workload and its pods.
func (g *gangCase) submitBuilt(t *testing.T, ex example, resources corev1.ResourceList,
	build func(created *unstructured.Unstructured, pods []*unstructured.Unstructured) (*podgroups.Result, error)) {
	t.Helper()
	obj, pods := inNamespace(ex, g.ns)
	created, err := g.c.create(t, obj, false)
	require.NoError(t, err)
	res, err := build(created, pods)
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
		g.noneBound(t, wait)
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

// noneBound waits until the scheduler has tried every pod of the case and
// marked it unschedulable, then checks that none is bound for a while.
func (g *gangCase) noneBound(t *testing.T, wait time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, p := range g.pods {
			pod, err := g.c.cs.CoreV1().Pods(g.ns).Get(context.Background(), p.GetName(), metav1.GetOptions{})
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
}

// jobSetHierarchy is the JobSet's gang as issue 29 wants it and KAI's
// podgrouper builds it: one group for the JobSet, a subgroup per
// replicated job (the driver, the workers), and under the workers a leaf
// per replica (its Job's 4 pods), every subgroup required; from the
// placements of the built-in's GetGangGroups (instance: the replicated
// job) and the pods' jobset.sigs.k8s.io/job-index label (the Job's index).
func jobSetHierarchy(t *testing.T, gangs *interpreter.GangResult, pods []*unstructured.Unstructured, uid string) *interpreter.GangResult {
	t.Helper()
	jobIndex := map[string]string{}
	for _, p := range pods {
		jobIndex[p.GetNamespace()+"/"+p.GetName()] = p.GetLabels()["jobset.sigs.k8s.io/job-index"]
	}
	name := "pg-" + uid + "-jobset"
	out := &interpreter.GangResult{Unmatched: gangs.Unmatched}
	g := interpreter.Group{Name: name, Definition: "replicatedjob"}
	index := map[string]int{}
	sub := func(sg interpreter.SubGroup) *interpreter.SubGroup {
		if i, ok := index[sg.Name]; ok {
			return &g.SubGroups[i]
		}
		index[sg.Name] = len(g.SubGroups)
		g.SubGroups = append(g.SubGroups, sg)
		return &g.SubGroups[len(g.SubGroups)-1]
	}
	for _, pl := range gangs.Placements {
		rj := sub(interpreter.SubGroup{Name: pl.Instance})
		rj.Pods = append(rj.Pods, pl.Pod)
		rj.MinMember++
		if pl.Instance == "workers" {
			require.NotEmpty(t, jobIndex[pl.Pod], "pod %s has its Job's index", pl.Pod)
			leaf := sub(interpreter.SubGroup{Name: "workers-" + jobIndex[pl.Pod], Parent: "workers"})
			leaf.Pods = append(leaf.Pods, pl.Pod)
			leaf.MinMember++
		}
		g.Pods = append(g.Pods, pl.Pod)
		g.MinMember++
		pl.Group = name
		out.Placements = append(out.Placements, pl)
	}
	out.Groups = []interpreter.Group{g}
	return out
}

// Kubernetes' CompositePodGroup (alpha in 1.37, with the testenv's
// CompositePodGroup gate): the JobSet as one hierarchical gang, the driver
// and a leaf PodGroup per workers' Job under CompositePodGroups. When the
// whole gang fits kube-scheduler binds all 9 pods; when each leaf would fit
// alone but the whole does not (9 pods of 2 GPUs on 2 nodes of 8), none is
// bound: the leaves are held together by their CompositePodGroups, where
// flat leaf PodGroups would each be bound on their own.
func TestIntegrationHierarchicalGang(t *testing.T) {
	cfg := testenv.Config(t)
	testenv.InstallCRDs(t, cfg)
	testenv.FakeNode(t, cfg)
	c := connect(t, cfg)
	var jobset example
	for _, ex := range examples(t) {
		if ex.name == "jobset" {
			jobset = ex
		}
	}
	require.NotNil(t, jobset.p)
	// The example's pods of its own namespace (a driver of another
	// namespace's JobSet is among them, to be left unmatched).
	var own []*unstructured.Unstructured
	for _, p := range jobset.pods {
		if p.GetNamespace() == jobset.obj.GetNamespace() {
			own = append(own, p)
		}
	}
	jobset.pods = own
	build := func(t *testing.T) func(created *unstructured.Unstructured, pods []*unstructured.Unstructured) (*podgroups.Result, error) {
		return func(created *unstructured.Unstructured, pods []*unstructured.Unstructured) (*podgroups.Result, error) {
			ctx := context.Background()
			gangs, err := jobset.p.GetGangGroups(ctx, created, pods)
			require.NoError(t, err)
			specs, err := jobset.p.GetPodSpecs(ctx, created)
			require.NoError(t, err)
			res, err := podgroups.Build(podgroups.Input{Object: created, Karta: jobset.p.Karta(), Gangs: jobSetHierarchy(t, gangs, pods, string(created.GetUID())),
				PodSpecs: specs, Pods: pods}, podgroups.WorkloadAPI, podgroups.Options{CompositePodGroup: true})
			if err == nil {
				var kinds []string
				for _, o := range res.Objects {
					kinds = append(kinds, o.GetKind())
				}
				assert.Equal(t, []string{"Workload", "CompositePodGroup", "CompositePodGroup", "PodGroup", "PodGroup", "PodGroup"}, kinds)
			}
			return res, err
		}
	}
	wait := 90 * time.Second

	t.Run("fits: all bound together", func(t *testing.T) {
		g := &gangCase{c: c, ns: testenv.Namespace(t, cfg)}
		g.submitBuilt(t, jobset, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}, build(t))
		require.Len(t, g.pods, 9, "the driver and 2 × 4 workers")
		require.Eventually(t, func() bool { n, _ := g.bound(t); return n == len(g.pods) }, wait, 250*time.Millisecond,
			"every pod of the gang is bound")
	})

	twoGPUs := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), "nvidia.com/gpu": resource.MustParse("2")}
	t.Run("each leaf fits, the gang does not: nothing bound", func(t *testing.T) {
		g := &gangCase{c: c, ns: testenv.Namespace(t, cfg)}
		g.submitBuilt(t, jobset, twoGPUs, build(t))
		require.Len(t, g.pods, 9)
		g.noneBound(t, wait)
	})

	// The control: the same leaf PodGroups without their CompositePodGroups
	// are gangs of their own, and some are bound.
	t.Run("the leaves alone: some bound", func(t *testing.T) {
		g := &gangCase{c: c, ns: testenv.Namespace(t, cfg)}
		g.submitBuilt(t, jobset, twoGPUs, func(created *unstructured.Unstructured, pods []*unstructured.Unstructured) (*podgroups.Result, error) {
			res, err := build(t)(created, pods)
			if err != nil {
				return nil, err
			}
			var leaves []*unstructured.Unstructured
			for _, o := range res.Objects {
				if o.GetKind() == "PodGroup" {
					unstructured.RemoveNestedField(o.Object, "spec", "parentCompositePodGroupName")
					unstructured.RemoveNestedField(o.Object, "spec", "workloadRef")
					leaves = append(leaves, o)
				}
			}
			res.Objects = leaves
			return res, nil
		})
		require.Eventually(t, func() bool { n, _ := g.bound(t); return n > 0 }, wait, 250*time.Millisecond,
			"a leaf that fits is bound on its own")
		n, where := g.bound(t)
		assert.Less(t, n, len(g.pods), where)
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
