//go:build integration

package helm

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/controller"
	"github.com/kartalua/karta/gangoutput"
	"github.com/kartalua/karta/internal/testenv"
	"github.com/kartalua/karta/podgroups"
	"github.com/kartalua/karta/webhook"
)

// fieldManager is the field manager of the test's server-side applies, as
// Helm's would be.
const fieldManager = "helm"

// The chart installed on the test cluster, and `karta controller` run out
// of cluster with the Deployment's own arguments as the chart's
// ServiceAccount (impersonated): it leads, writes a Karta's conditions
// through its lifecycle, serves the webhook with the Secret's certificate,
// and releases the Lease. Then each RBAC rule of the chart is dropped in
// turn, and the controller is shown to fail at what that rule allows.
func TestIntegrationChart(t *testing.T) {
	cfg := testenv.Config(t)
	testenv.InstallCRDs(t, cfg)
	ns := testenv.Namespace(t, cfg)
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	ctx := t.Context()
	bin := buildKarta(t)

	// The namespace enforces the restricted Pod Security Standard.
	_, err = cs.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"restricted","pod-security.kubernetes.io/enforce-version":"latest"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)

	// The webhook's certificate, in a Secret the user names.
	release := ns
	fullname := release + "-karta"
	webhookHost := fullname + "-webhook." + ns + ".svc"
	ca, certPEM, keyPEM := webhookCertificate(t, fullname+"-webhook", ns)
	_, err = cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "webhook-tls"},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	// The Kartas of this test only: other tests share the cluster.
	testLabel := "karta.run.ai/test"
	// The gang output looks after this test's workloads only.
	values := fmt.Sprintf(`
webhook: {enabled: true, tls: {secretName: webhook-tls}, caBundle: %s}
controller: {labelSelector: "%s=%s"}
leaderElection: {leaseDuration: 8s, renewDeadline: 6s, retryPeriod: 1s}
gangOutput: {enabled: true, target: volcano, selector: "%s=%s"}
`, base64.StdEncoding.EncodeToString(ca.pem), testLabel, ns, testLabel, ns)
	objs, err := render(t, release, ns, values)
	require.NoError(t, err)
	require.Equal(t, []string{
		"PodDisruptionBudget/" + fullname, "ServiceAccount/" + fullname, "CustomResourceDefinition/kartas.run.ai",
		"ClusterRole/" + fullname, "ClusterRoleBinding/" + fullname, "Role/" + fullname + "-leader-election",
		"RoleBinding/" + fullname + "-leader-election", "Service/" + fullname + "-metrics", "Service/" + fullname + "-webhook",
		"Deployment/" + fullname, "MutatingWebhookConfiguration/" + fullname + "-pods",
	}, names(objs))

	// Every rendered object, applied as Helm would, in its install order;
	// but the pods webhook configuration, which the API server would call
	// for every pod of the cluster while the controller runs out of it:
	// the server validates it (a dry run), and the test calls the webhook
	// itself.
	ap := newApplier(t, cfg)
	for _, o := range objs {
		if o.GetKind() == "MutatingWebhookConfiguration" {
			ap.dryRun(t, o)
			continue
		}
		ap.install(t, o)
	}

	// The pods pass the restricted Pod Security Standard and run (on kwok's
	// nodes), both replicas.
	if !assert.Eventually(t, func() bool {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, fullname, metav1.GetOptions{})
		return err == nil && d.Status.AvailableReplicas == 2
	}, 2*time.Minute, 200*time.Millisecond, "two available replicas") {
		t.Fatalf("the Deployment is not available; events:\n%s", events(cs, ns))
	}
	// A pod without the chart's security context would not be admitted.
	d := &appsv1.Deployment{}
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(find(t, objs, "Deployment", fullname).Object, d))
	lax := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "lax", Namespace: ns}, Spec: *d.Spec.Template.Spec.DeepCopy()}
	lax.Spec.SecurityContext, lax.Spec.Containers[0].SecurityContext = nil, nil
	_, err = cs.CoreV1().Pods(ns).Create(ctx, lax, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "violates PodSecurity")

	sa := "system:serviceaccount:" + ns + ":" + fullname
	run := &controllerRun{
		t: t, bin: bin, container: d.Spec.Template.Spec.Containers[0], volumes: d.Spec.Template.Spec.Volumes,
		cs: cs, ns: ns, kubeconfig: impersonating(t, sa), ca: ca.pool, webhookHost: webhookHost,
	}

	kartas := dyn.Resource(controller.KartaResource)
	karta := trainJobKarta(t, ns, testLabel)
	gang := &gangFixture{cs: cs, dyn: dyn, ns: ns, label: testLabel + "=" + ns}
	group := ns + ".example.com"

	t.Run("lifecycle", func(t *testing.T) {
		p := run.start(t)
		p.waitReady(t, "ok: leader")
		code, body := p.get(t, "health probes", "/healthz")
		assert.Equal(t, http.StatusOK, code)
		assert.Equal(t, "ok", body)
		lease, err := cs.CoordinationV1().Leases(ns).Get(ctx, fullname, metav1.GetOptions{})
		require.NoError(t, err)
		require.NotNil(t, lease.Spec.HolderIdentity)
		assert.Equal(t, fmt.Sprintf("%s_%d", hostname(t), p.cmd.Process.Pid), *lease.Spec.HolderIdentity)
		assert.False(t, p.interpret(t, group).Successful, "the kind is unknown before its Karta")

		// Created: accepted, compiled, served.
		_, err = kartas.Create(ctx, karta.DeepCopy(), metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = kartas.Delete(context.Background(), karta.GetName(), metav1.DeleteOptions{}) })
		waitCondition(t, kartas, karta.GetName(), controller.ConditionAccepted, metav1.ConditionTrue, controller.ReasonValid, p)
		waitCondition(t, kartas, karta.GetName(), controller.ConditionCompiled, metav1.ConditionTrue, "Compiled", p)
		require.Eventually(t, func() bool { return p.interpret(t, group).Successful }, time.Minute, 100*time.Millisecond)
		r := p.interpret(t, group)
		require.NotNil(t, r.Healthy)
		assert.True(t, *r.Healthy)

		// Updated into an invalid Karta: the problem in its condition, the kind forgotten.
		broken := []byte(`[{"op":"replace","path":"/spec/structureDefinition/childComponents/0/ownerRef","value":"trainjb"}]`)
		_, err = kartas.Patch(ctx, karta.GetName(), types.JSONPatchType, broken, metav1.PatchOptions{})
		require.NoError(t, err)
		cond := waitCondition(t, kartas, karta.GetName(), controller.ConditionAccepted, metav1.ConditionFalse, controller.ReasonInvalid, p)
		assert.Contains(t, cond.Message, `spec.structureDefinition.childComponents[0].ownerRef: ownerRef "trainjb" does not name a component`)
		assert.Equal(t, int64(2), cond.ObservedGeneration)
		require.Eventually(t, func() bool { return !p.interpret(t, group).Successful }, time.Minute, 100*time.Millisecond)

		// Fixed: served again.
		fixed := []byte(`[{"op":"replace","path":"/spec/structureDefinition/childComponents/0/ownerRef","value":"trainjob"}]`)
		_, err = kartas.Patch(ctx, karta.GetName(), types.JSONPatchType, fixed, metav1.PatchOptions{})
		require.NoError(t, err)
		cond = waitCondition(t, kartas, karta.GetName(), controller.ConditionAccepted, metav1.ConditionTrue, controller.ReasonValid, p)
		assert.Equal(t, int64(3), cond.ObservedGeneration)
		require.Eventually(t, func() bool { return p.interpret(t, group).Successful }, time.Minute, 100*time.Millisecond)

		p.waitMetrics(t, "karta_controller_leading 1", "karta_controller_synced 1", `karta_controller_kartas{state="accepted"} 1`)

		// Deleted: forgotten.
		require.NoError(t, kartas.Delete(ctx, karta.GetName(), metav1.DeleteOptions{}))
		require.Eventually(t, func() bool { return !p.interpret(t, group).Successful }, time.Minute, 100*time.Millisecond)

		// The gang output: the pods the Job controller makes for a
		// JobSet's Job form a gang; its Volcano PodGroup is written, owned
		// by the JobSet, ...
		gang.create(t)
		pg := gang.waitPodGroup(t, p)
		n, _, _ := unstructured.NestedInt64(pg.Object, "spec", "minMember")
		assert.Equal(t, int64(2), n)
		assert.Equal(t, "JobSet", pg.GetOwnerReferences()[0].Kind)
		// ... the pod webhook (HTTPS, the Secret's certificate) links a pod
		// to it from the caches of the ServiceAccount's informers ...
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=train-workers-0"})
		require.NoError(t, err)
		require.NotEmpty(t, pods.Items)
		resp := p.admit(t, &pods.Items[0])
		assert.True(t, resp.Allowed)
		assert.Contains(t, string(resp.Patch), `"scheduling.k8s.io/group-name":"`+pg.GetName()+`"`)
		// ... the JobSet tells, and when it is left alone the PodGroup goes.
		gang.waitEvent(t, gangoutput.ReasonWritten)
		gang.setSwitch(t, "false")
		gang.waitGone(t, p)
		gang.setSwitch(t, "")
		gang.waitPodGroup(t, p)
		p.waitMetrics(t, "karta_gang_output_synced 1", `karta_pod_webhook_admissions_total{result="linked"} 1`)

		// Stopped: the Lease is released.
		p.stop(t)
		lease, err = cs.CoordinationV1().Leases(ns).Get(ctx, fullname, metav1.GetOptions{})
		require.NoError(t, err)
		assert.True(t, lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "", "the lease is released")
		assert.NotContains(t, p.stderr.String(), "forbidden", "the chart's RBAC is enough")
	})

	// Each rule dropped in turn: the controller fails at what it allows.
	// The rule's text on the API server's refusal, and what the user sees.
	type failure struct {
		forbidden string
		setup     func(t *testing.T)
		symptom   func(t *testing.T, p *controllerProcess)
	}
	noConditions := func(t *testing.T, p *controllerProcess) {
		p.waitReady(t, "ok: leader")
		obj, err := kartas.Get(ctx, karta.GetName(), metav1.GetOptions{})
		require.NoError(t, err)
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		assert.Empty(t, conds, "no condition is written")
	}
	standby := func(t *testing.T, p *controllerProcess) {
		p.waitReady(t, "ok: standby")
		time.Sleep(3 * time.Second) // retries at 1 s: still not leading
		_, body := p.get(t, "health probes", "/readyz")
		assert.Equal(t, "ok: standby", body, "never leads")
	}
	failures := map[string]failure{
		"run.ai kartas get,list,watch": {
			forbidden: `cannot list resource "kartas" in API group "run.ai" at the cluster scope`,
			symptom: func(t *testing.T, p *controllerProcess) {
				code, body := p.get(t, "health probes", "/readyz")
				assert.Equal(t, http.StatusServiceUnavailable, code)
				assert.Contains(t, body, "not ready")
			},
		},
		"run.ai kartas/status update": {
			forbidden: `cannot update resource "kartas/status" in API group "run.ai" at the cluster scope`,
			setup: func(t *testing.T) {
				_, err := kartas.Create(ctx, karta.DeepCopy(), metav1.CreateOptions{})
				require.NoError(t, err)
				t.Cleanup(func() { _ = kartas.Delete(context.Background(), karta.GetName(), metav1.DeleteOptions{}) })
			},
			symptom: noConditions,
		},
		"coordination.k8s.io leases create": {
			forbidden: `cannot create resource "leases" in API group "coordination.k8s.io" in the namespace "` + ns + `"`,
			setup: func(t *testing.T) {
				err := cs.CoordinationV1().Leases(ns).Delete(ctx, fullname, metav1.DeleteOptions{})
				if !apierrors.IsNotFound(err) {
					require.NoError(t, err)
				}
			},
			symptom: standby,
		},
		"coordination.k8s.io leases[" + fullname + "] get,update": {
			forbidden: `cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "` + ns + `"`,
			symptom:   standby,
		},
	}
	// The gang output's rules.
	gangNotReady := func(t *testing.T, p *controllerProcess) {
		time.Sleep(2 * time.Second)
		code, body := p.get(t, "health probes", "/readyz")
		assert.Equal(t, http.StatusServiceUnavailable, code)
		assert.Equal(t, "not ready: the gang output's caches are not synced yet", body)
	}
	noPodGroup := func(t *testing.T, p *controllerProcess) {
		p.waitReady(t, "ok: leader")
		time.Sleep(3 * time.Second)
		assert.Nil(t, gang.podGroup(t), "no PodGroup is written")
	}
	failures["scheduling.volcano.sh podgroups list,watch"] = failure{
		forbidden: `cannot list resource "podgroups" in API group "scheduling.volcano.sh" at the cluster scope`,
		symptom:   gangNotReady,
	}
	failures["scheduling.volcano.sh podgroups create,patch"] = failure{
		forbidden: `cannot patch resource "podgroups" in API group "scheduling.volcano.sh" in the namespace "` + ns + `"`,
		setup:     gang.deletePodGroup,
		symptom:   noPodGroup,
	}
	failures["scheduling.volcano.sh podgroups delete"] = failure{
		forbidden: `cannot delete resource "podgroups" in API group "scheduling.volcano.sh" in the namespace "` + ns + `"`,
		setup: func(t *testing.T) {
			gang.ensurePodGroup(t)
			gang.setSwitch(t, "false")
			t.Cleanup(func() { gang.setSwitch(t, "") })
		},
		symptom: func(t *testing.T, p *controllerProcess) {
			p.waitReady(t, "ok: leader")
			time.Sleep(3 * time.Second)
			assert.NotNil(t, gang.podGroup(t), "the PodGroup of a workload left alone stays")
		},
	}
	failures[" pods list,watch"] = failure{
		forbidden: `cannot list resource "pods" in API group "" at the cluster scope`,
		symptom:   gangNotReady,
	}
	failures[" events create,patch"] = failure{
		forbidden: `cannot create resource "events" in API group "" in the namespace "` + ns + `"`,
		setup: func(t *testing.T) {
			gang.deletePodGroup(t)
			gang.deleteEvents(t)
		},
		symptom: func(t *testing.T, p *controllerProcess) {
			gang.waitPodGroup(t, p)
			time.Sleep(2 * time.Second)
			assert.Empty(t, gang.events(t), "no event on the JobSet")
		},
	}
	// One rule per API group of workload and owner kinds: without it the
	// kind is not watched. Without jobsets the JobSet loses its PodGroup;
	// without the Jobs its pods come from, it keeps it.
	for _, rule := range find(t, objs, "ClusterRole", fullname).Object["rules"].([]any) {
		r := &rbacv1.PolicyRule{}
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(rule.(map[string]any), r))
		if _, ok := failures[ruleName(r)]; ok || r.APIGroups[0] == "run.ai" {
			continue
		}
		// The guarded informers may log the watch refused before the list.
		f := failure{forbidden: fmt.Sprintf(`resource "%s" in API group "%s" at the cluster scope`, r.Resources[0], r.APIGroups[0])}
		switch r.APIGroups[0] {
		case "trainer.kubeflow.org":
			// The runtimes are watched once a registered Karta references
			// them: the TrainJob Karta that reads its runtime.
			f.setup = func(t *testing.T) {
				k := exampleObject(t, "examples/kartas/trainjob-runtime.yaml")
				k.SetName(ns + "-" + k.GetName())
				k.SetLabels(map[string]string{testLabel: ns})
				_, err := kartas.Create(ctx, k, metav1.CreateOptions{})
				require.NoError(t, err)
				t.Cleanup(func() { _ = kartas.Delete(context.Background(), k.GetName(), metav1.DeleteOptions{}) })
			}
			f.symptom = func(t *testing.T, p *controllerProcess) {
				p.waitReady(t, "ok: leader")
				p.waitStderr(t, "watch failing: "+r.Resources[0]+"."+r.APIGroups[0])
			}
		case "jobset.x-k8s.io":
			f.setup, f.symptom = gang.deletePodGroup, noPodGroup
		case "batch":
			// The JobSet's v2 group is one per JobSet and needs no pods:
			// without the Jobs (its pods' owners) it is still written, from
			// the JobSet alone; only the pods cannot be traced to it.
			f.setup = gang.deletePodGroup
			f.symptom = func(t *testing.T, p *controllerProcess) {
				p.waitReady(t, "ok: leader")
				p.waitStderr(t, "watch failing: "+r.Resources[0]+"."+r.APIGroups[0])
				gang.waitPodGroup(t, p)
			}
		default:
			f.symptom = func(t *testing.T, p *controllerProcess) {
				p.waitReady(t, "ok: leader")
				p.waitStderr(t, "watch failing: "+r.Resources[0]+"."+r.APIGroups[0])
			}
		}
		failures[ruleName(r)] = f
	}
	rbac := rbacClient{cs: cs, ns: ns, sa: sa}
	for _, role := range []*unstructured.Unstructured{find(t, objs, "ClusterRole", fullname), find(t, objs, "Role", fullname+"-leader-election")} {
		rules := role.Object["rules"].([]any)
		for i := range rules {
			rule := &rbacv1.PolicyRule{}
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(rules[i].(map[string]any), rule))
			name := ruleName(rule)
			f, ok := failures[name]
			require.True(t, ok, "%s rule %q has no test of what breaks without it", role.GetKind(), name)
			delete(failures, name)
			t.Run("without "+name, func(t *testing.T) {
				without := role.DeepCopy()
				without.Object["rules"] = append(append([]any{}, rules[:i]...), rules[i+1:]...)
				ap.apply(t, without)
				rbac.waitAllowed(t, rule, false)
				t.Cleanup(func() {
					ap.apply(t, role)
					rbac.waitAllowed(t, rule, true)
				})
				if f.setup != nil {
					f.setup(t)
				}
				p := run.start(t)
				p.waitStderr(t, f.forbidden)
				f.symptom(t, p)
				p.stop(t)
			})
		}
	}
	assert.Empty(t, failures, "cases for rules the chart does not have")
}

// ruleName is how a rule is named in the test: group, resources, verbs.
func ruleName(r *rbacv1.PolicyRule) string {
	res := strings.Join(r.Resources, ",")
	if len(r.ResourceNames) > 0 {
		res += "[" + strings.Join(r.ResourceNames, ",") + "]"
	}
	return strings.Join(r.APIGroups, ",") + " " + res + " " + strings.Join(r.Verbs, ",")
}

// applier applies objects server-side, as `helm install` creates them.
type applier struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

func newApplier(t *testing.T, cfg *rest.Config) *applier {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	require.NoError(t, err)
	return &applier{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))}
}

func (a *applier) resource(t *testing.T, obj *unstructured.Unstructured) (dynamic.ResourceInterface, bool) {
	t.Helper()
	gvk := obj.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	require.NoError(t, err, "%s", gvk)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return a.dyn.Resource(m.Resource).Namespace(obj.GetNamespace()), true
	}
	return a.dyn.Resource(m.Resource), false
}

// apply applies obj.
func (a *applier) apply(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	client, _ := a.resource(t, obj)
	// Not t.Context(): cleanups apply too, after it is cancelled.
	_, err := client.Apply(context.Background(), obj.GetName(), obj, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	require.NoError(t, err, "applying %s/%s", obj.GetKind(), obj.GetName())
}

// install applies obj as `helm install` creates it. Cluster-scoped objects
// are deleted when the test ends (the namespace takes the others with it),
// but for the CRD, which the cluster's other tests share.
func (a *applier) install(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	a.apply(t, obj)
	client, namespaced := a.resource(t, obj)
	if !namespaced && obj.GetKind() != "CustomResourceDefinition" {
		t.Cleanup(func() {
			err := client.Delete(context.Background(), obj.GetName(), metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting %s/%s: %v", obj.GetKind(), obj.GetName(), err)
			}
		})
	}
}

// dryRun has the server validate obj without storing it.
func (a *applier) dryRun(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	client, _ := a.resource(t, obj)
	_, err := client.Apply(t.Context(), obj.GetName(), obj, metav1.ApplyOptions{FieldManager: fieldManager, Force: true, DryRun: []string{metav1.DryRunAll}})
	require.NoError(t, err, "dry run of %s/%s", obj.GetKind(), obj.GetName())
}

// rbacClient asks the API server what the ServiceAccount may do.
type rbacClient struct {
	cs     kubernetes.Interface
	ns, sa string
}

// waitAllowed waits until the authorizer allows (or denies) the rule's
// first verb on its first resource to the ServiceAccount: RBAC changes
// reach it through an informer.
func (r rbacClient) waitAllowed(t *testing.T, rule *rbacv1.PolicyRule, allowed bool) {
	t.Helper()
	res, sub, _ := strings.Cut(rule.Resources[0], "/")
	attrs := &authorizationv1.ResourceAttributes{Group: rule.APIGroups[0], Resource: res, Subresource: sub, Verb: rule.Verbs[0]}
	if len(rule.ResourceNames) > 0 {
		attrs.Name = rule.ResourceNames[0]
	}
	if rule.APIGroups[0] == "coordination.k8s.io" {
		attrs.Namespace = r.ns
	}
	require.Eventually(t, func() bool {
		sar, err := r.cs.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: r.sa, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + r.ns, "system:authenticated"}, ResourceAttributes: attrs},
		}, metav1.CreateOptions{})
		return err == nil && sar.Status.Allowed == allowed
	}, 30*time.Second, 50*time.Millisecond, "%s allowed=%v", ruleName(rule), allowed)
}

// controllerRun runs the Deployment's container out of cluster.
type controllerRun struct {
	t           *testing.T
	bin         string
	container   corev1.Container
	volumes     []corev1.Volume
	cs          kubernetes.Interface
	ns          string
	kubeconfig  string
	ca          *x509.CertPool
	webhookHost string
}

var listenFlags = regexp.MustCompile(`^--(health-addr|metrics-addr|serve)=:\d+$`)

// args are the container's arguments with the listeners on free loopback
// ports, the mounted Secrets' files at dir, and the kubeconfig that stands
// for the pod's ServiceAccount.
func (r *controllerRun) args(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, a := range r.container.Args {
		if m := listenFlags.FindStringSubmatch(a); m != nil {
			a = "--" + m[1] + "=127.0.0.1:0"
		}
		for _, vm := range r.container.VolumeMounts {
			a = strings.ReplaceAll(a, vm.MountPath+"/", filepath.Join(dir, vm.Name)+"/")
		}
		out = append(out, a)
	}
	return append(out, "--kubeconfig="+r.kubeconfig)
}

// mount writes each mounted Secret's keys where args points, as the
// kubelet would.
func (r *controllerRun) mount(t *testing.T, dir string) {
	t.Helper()
	for _, vm := range r.container.VolumeMounts {
		for _, v := range r.volumes {
			if v.Name != vm.Name {
				continue
			}
			require.NotNil(t, v.Secret, "volume %s", v.Name)
			s, err := r.cs.CoreV1().Secrets(r.ns).Get(t.Context(), v.Secret.SecretName, metav1.GetOptions{})
			require.NoError(t, err)
			require.NoError(t, os.MkdirAll(filepath.Join(dir, v.Name), 0o700))
			for k, data := range s.Data {
				require.NoError(t, os.WriteFile(filepath.Join(dir, v.Name, k), data, 0o600))
			}
		}
	}
}

type controllerProcess struct {
	run    *controllerRun
	cmd    *exec.Cmd
	stderr *testenv.SyncBuffer
	done   chan error
	addrs  map[string]string
}

var servingAddr = regexp.MustCompile(`msg="serving ([^"]+)" addr=(\S+)`)

func (r *controllerRun) start(t *testing.T) *controllerProcess {
	t.Helper()
	dir := t.TempDir()
	r.mount(t, dir)
	p := &controllerProcess{run: r, stderr: &testenv.SyncBuffer{}, done: make(chan error, 1), addrs: map[string]string{}}
	p.cmd = exec.Command(r.bin, r.args(t, dir)...)
	p.cmd.Stdout, p.cmd.Stderr = io.Discard, p.stderr
	require.NoError(t, p.cmd.Start())
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("karta %s\nstderr:\n%s", strings.Join(p.cmd.Args[1:], " "), p.stderr.String())
		}
	})
	require.Eventually(t, func() bool {
		for _, m := range servingAddr.FindAllStringSubmatch(p.stderr.String(), -1) {
			p.addrs[m[1]] = m[2]
		}
		return len(p.addrs) == 3
	}, 2*time.Minute, 20*time.Millisecond, "listeners not logged: %s", p.stderr.String())
	return p
}

// stop sends SIGTERM, as the kubelet does, and expects a clean exit.
func (p *controllerProcess) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-p.done:
		require.NoError(t, err, "stderr: %s", p.stderr.String())
	case <-time.After(time.Minute):
		t.Fatalf("karta controller did not stop; stderr: %s", p.stderr.String())
	}
}

func (p *controllerProcess) get(t *testing.T, server, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + p.addrs[server] + path)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// waitMetrics polls the metrics until they hold every line start in
// wants: the controller counts after the writes the test observes.
func (p *controllerProcess) waitMetrics(t *testing.T, wants ...string) {
	t.Helper()
	has := func(text string) bool {
		for _, w := range wants {
			if !strings.Contains(text, w) {
				return false
			}
		}
		return true
	}
	assert.Eventually(t, func() bool { _, m := p.get(t, "metrics", "/metrics"); return has(m) }, time.Minute, 100*time.Millisecond, "metrics")
	_, text := p.get(t, "metrics", "/metrics")
	for _, w := range wants {
		assert.Contains(t, text, w)
	}
}

func (p *controllerProcess) waitReady(t *testing.T, want string) {
	t.Helper()
	require.Eventually(t, func() bool {
		code, body := p.get(t, "health probes", "/readyz")
		return code == http.StatusOK && body == want
	}, 2*time.Minute, 100*time.Millisecond, "/readyz is not %q; stderr: %s", want, p.stderr.String())
}

func (p *controllerProcess) waitStderr(t *testing.T, want string) {
	t.Helper()
	// klog quotes the error, escaping its quotes.
	require.Eventually(t, func() bool { return strings.Contains(strings.ReplaceAll(p.stderr.String(), `\"`, `"`), want) },
		time.Minute, 50*time.Millisecond, "stderr does not say %q: %s", want, p.stderr.String())
}

// interpret asks the webhook, over HTTPS with the certificate of the
// Secret checked against the Service's name, for a TrainJob's health.
func (p *controllerProcess) interpret(t *testing.T, group string) *webhook.ResourceInterpreterResponse {
	t.Helper()
	obj := exampleObject(t, "examples/tutorial-trainjob/running.yaml")
	obj.SetAPIVersion(group + "/v1")
	req, err := json.Marshal(map[string]any{"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterContext",
		"request": map[string]any{"uid": "u-1", "operation": "InterpretHealth", "object": obj.Object,
			"kind": map[string]string{"group": group, "version": "v1", "kind": "TrainJob"}}})
	require.NoError(t, err)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: p.run.ca, ServerName: p.run.webhookHost, MinVersion: tls.VersionTLS12},
	}}
	resp, err := client.Post("https://"+p.addrs["the interpreter webhook"]+webhook.InterpretPath, "application/json", bytes.NewReader(req))
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	var out webhook.ResourceInterpreterContext
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.NotNil(t, out.Response)
	return out.Response
}

// admit asks the pod webhook, over HTTPS, about pod's creation.
func (p *controllerProcess) admit(t *testing.T, pod *corev1.Pod) *admissionv1.AdmissionResponse {
	t.Helper()
	raw, err := json.Marshal(pod)
	require.NoError(t, err)
	req, err := json.Marshal(&admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "review-1", Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
			Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespace: pod.Namespace, Name: pod.Name,
			Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw}},
	})
	require.NoError(t, err)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: p.run.ca, ServerName: p.run.webhookHost, MinVersion: tls.VersionTLS12},
	}}
	resp, err := client.Post("https://"+p.addrs["the interpreter webhook"]+gangoutput.WebhookPath, "application/json", bytes.NewReader(req))
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out admissionv1.AdmissionReview
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.NotNil(t, out.Response)
	return out.Response
}

// gangFixture is the gang output's part of the test: a JobSet labelled
// for the controller, and the Job the JobSet controller would make (none
// runs here), whose pods the Job controller makes.
type gangFixture struct {
	cs           kubernetes.Interface
	dyn          dynamic.Interface
	ns, label    string
	jobSetUID    types.UID
	podGroupName string
}

var (
	jobSetGVR   = schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}
	podGroupGVR = schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "podgroups"}
)

func (g *gangFixture) create(t *testing.T) {
	t.Helper()
	key, value, _ := strings.Cut(g.label, "=")
	js := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(fmt.Sprintf(`
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: train, namespace: %s, labels: {%q: %q}}
spec:
  replicatedJobs:
  - name: workers
    replicas: 1
    template: {spec: {parallelism: 2, completions: 2, template: {spec: {containers: [{name: train, image: registry.example.com/train:1}]}}}}
`, g.ns, key, value)), &js.Object))
	js, err := g.dyn.Resource(jobSetGVR).Namespace(g.ns).Create(t.Context(), js, metav1.CreateOptions{})
	require.NoError(t, err)
	g.jobSetUID = js.GetUID()
	g.podGroupName = fmt.Sprintf("pg-%s-jobset", js.GetUID())
	yes, no, two := true, false, int32(2)
	nonRoot := int64(1000)
	labels := map[string]string{"jobset.sigs.k8s.io/jobset-name": "train", "jobset.sigs.k8s.io/replicatedjob-name": "workers",
		"jobset.sigs.k8s.io/job-index": "0"}
	_, err = g.cs.BatchV1().Jobs(g.ns).Create(t.Context(), &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "train-workers-0", Labels: labels, OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "jobset.x-k8s.io/v1alpha2", Kind: "JobSet", Name: "train", UID: js.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}}},
		Spec: batchv1.JobSpec{Parallelism: &two, Completions: &two, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes, RunAsUser: &nonRoot, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
				Containers: []corev1.Container{{Name: "train", Image: "registry.example.com/train:1",
					SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}}},
		}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
}

// podGroup is the JobSet's PodGroup, nil when there is none.
func (g *gangFixture) podGroup(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	pg, err := g.dyn.Resource(podGroupGVR).Namespace(g.ns).Get(context.Background(), g.podGroupName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	require.NoError(t, err)
	return pg
}

func (g *gangFixture) waitPodGroup(t *testing.T, p *controllerProcess) *unstructured.Unstructured {
	t.Helper()
	var pg *unstructured.Unstructured
	require.Eventually(t, func() bool {
		pg = g.podGroup(t)
		return pg != nil
	}, 2*time.Minute, 100*time.Millisecond, "PodGroup %s; stderr: %s", g.podGroupName, p.stderr.String())
	return pg
}

func (g *gangFixture) waitGone(t *testing.T, p *controllerProcess) {
	t.Helper()
	require.Eventually(t, func() bool { return g.podGroup(t) == nil }, 2*time.Minute, 100*time.Millisecond, "PodGroup deleted; stderr: %s", p.stderr.String())
}

// ensurePodGroup makes the JobSet's PodGroup, as karta writes it, when
// there is none.
func (g *gangFixture) ensurePodGroup(t *testing.T) {
	t.Helper()
	if g.podGroup(t) != nil {
		return
	}
	yes := true
	pg := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "spec": map[string]any{"minMember": int64(2)}}}
	pg.SetName(g.podGroupName)
	pg.SetLabels(map[string]string{podgroups.ManagedByLabel: "karta"})
	pg.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "jobset.x-k8s.io/v1alpha2", Kind: "JobSet", Name: "train", UID: g.jobSetUID, Controller: &yes, BlockOwnerDeletion: &yes}})
	_, err := g.dyn.Resource(podGroupGVR).Namespace(g.ns).Create(context.Background(), pg, metav1.CreateOptions{})
	require.NoError(t, err)
}

func (g *gangFixture) deletePodGroup(t *testing.T) {
	t.Helper()
	err := g.dyn.Resource(podGroupGVR).Namespace(g.ns).Delete(context.Background(), g.podGroupName, metav1.DeleteOptions{})
	if !apierrors.IsNotFound(err) {
		require.NoError(t, err)
	}
}

// setSwitch sets the JobSet's karta.run.ai/gang-output annotation ("":
// none).
func (g *gangFixture) setSwitch(t *testing.T, value string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, gangoutput.SwitchAnnotation, value)
	if value == "" {
		patch = fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, gangoutput.SwitchAnnotation)
	}
	_, err := g.dyn.Resource(jobSetGVR).Namespace(g.ns).Patch(context.Background(), "train", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	require.NoError(t, err)
}

// events are the JobSet's events.
func (g *gangFixture) events(t *testing.T) []corev1.Event {
	t.Helper()
	evs, err := g.cs.CoreV1().Events(g.ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=train"})
	require.NoError(t, err)
	return evs.Items
}

func (g *gangFixture) waitEvent(t *testing.T, reason string) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, e := range g.events(t) {
			if e.Reason == reason {
				return true
			}
		}
		return false
	}, time.Minute, 100*time.Millisecond, "event %s on the JobSet", reason)
}

func (g *gangFixture) deleteEvents(t *testing.T) {
	t.Helper()
	for _, e := range g.events(t) {
		require.NoError(t, g.cs.CoreV1().Events(g.ns).Delete(context.Background(), e.Name, metav1.DeleteOptions{}))
	}
}

// waitCondition waits for a condition of the Karta with the status and
// reason, for its current generation.
func waitCondition(t *testing.T, kartas dynamic.ResourceInterface, name, typ string, status metav1.ConditionStatus, reason string, p *controllerProcess) metav1.Condition {
	t.Helper()
	var got metav1.Condition
	require.Eventually(t, func() bool {
		obj, err := kartas.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		var st struct {
			Conditions []metav1.Condition `json:"conditions"`
		}
		raw, _, _ := unstructured.NestedMap(obj.Object, "status")
		if runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &st) != nil {
			return false
		}
		c := meta.FindStatusCondition(st.Conditions, typ)
		if c == nil || c.Status != status || c.Reason != reason || c.ObservedGeneration != obj.GetGeneration() {
			return false
		}
		got = *c
		return true
	}, 2*time.Minute, 100*time.Millisecond, "%s=%s (%s) on %s; stderr: %s", typ, status, reason, name, p.stderr.String())
	return got
}

// trainJobKarta is examples/kartas/trainjob.yaml for the group of the
// test, labelled for the controller's selector.
func trainJobKarta(t *testing.T, ns, label string) *unstructured.Unstructured {
	t.Helper()
	k := exampleObject(t, "examples/kartas/trainjob.yaml")
	k.SetName(ns + "-trainjob")
	k.SetLabels(map[string]string{label: ns})
	require.NoError(t, unstructured.SetNestedField(k.Object, ns+".example.com", "spec", "structureDefinition", "rootComponent", "kind", "group"))
	return k
}

func exampleObject(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	obj := map[string]any{}
	require.NoError(t, yaml.Unmarshal(readRepoFile(t, path), &obj))
	return &unstructured.Unstructured{Object: obj}
}

// impersonating writes a kubeconfig that acts as user through the test
// cluster's admin credentials, as the pod's ServiceAccount token would.
func impersonating(t *testing.T, user string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(testenv.Kubeconfig(t))
	require.NoError(t, err)
	for _, auth := range cfg.AuthInfos {
		auth.Impersonate = user
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*cfg, path))
	return path
}

type certAuthority struct {
	pem  []byte
	pool *x509.CertPool
}

// webhookCertificate makes a CA and a serving certificate for the
// Service's DNS names, as cert-manager or a user would.
func webhookCertificate(t *testing.T, service, ns string) (ca certAuthority, certPEM, keyPEM []byte) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "karta test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	caCert, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: service + "." + ns + ".svc"},
		DNSNames:  []string{service, service + "." + ns, service + "." + ns + ".svc", service + "." + ns + ".svc.cluster.local"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	ca.pem = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	ca.pool = x509.NewCertPool()
	ca.pool.AddCert(caCert)
	return ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// events lists the namespace's events, for a failure message.
func events(cs kubernetes.Interface, ns string) string {
	evs, err := cs.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, e := range evs.Items {
		fmt.Fprintf(&b, "%s %s/%s: %s\n", e.Reason, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message)
	}
	return b.String()
}

func hostname(t *testing.T) string {
	t.Helper()
	h, err := os.Hostname()
	require.NoError(t, err)
	return h
}
