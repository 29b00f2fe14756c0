package helm

import (
	"encoding/base64"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/lint/support"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/gangoutput"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/podgroups"
)

// caBundle is a base64 PEM bundle as a user would pass it.
var caBundle = base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"))

// The value sets the chart is linted and rendered with: the default, and
// every optional part turned on in each way it can be.
var valueSets = map[string]string{
	"default": "",
	"webhook from a Secret, Karmada, gang output": `
webhook: {enabled: true, tls: {secretName: karta-webhook-tls}, caBundle: ` + caBundle + `}
karmada: {webhookConfiguration: true}
gangOutput:
  enabled: true
  target: volcano
  skip: [PyTorchJob.kubeflow.org, Job.batch.volcano.sh]
  selector: team=ml
  queue: research
  volcanoSubGroupPolicy: true
  extraResources: [{apiGroup: example.com, resources: [trainjobs]}]
  podWebhook: {namespaceSelector: {matchLabels: {gangs: "on"}, matchExpressions: [{key: tier, operator: Exists}]}}
`,
	"webhook from cert-manager, ServiceMonitor, gang output": `
webhook: {enabled: true, certManager: {enabled: true}}
metrics: {serviceMonitor: {enabled: true, labels: {release: prometheus}}}
gangOutput: {enabled: true, target: workload-api, skip: [], compositePodGroup: true}
`,
	"metrics exporter, Grafana dashboard": `
metricsExporter: {enabled: true, extraResources: [{apiGroup: example.com, resources: [trainjobs]}]}
grafanaDashboard: {enabled: true, namespace: monitoring, labels: {team: platform}, annotations: {grafana_folder: Karta}}
`,
	"gang output without the pod webhook": `
gangOutput: {enabled: true, target: kai, podWebhook: {enabled: false}}
`,
	"cert-manager with an issuer, Karmada at a URL": `
webhook: {enabled: true, certManager: {enabled: true, issuerRef: {kind: ClusterIssuer, name: corp-ca}}, caBundle: ` + caBundle + `}
karmada: {webhookConfiguration: true, url: "https://karta.example.com/interpret"}
`,
	"one replica, no leader election, own CRD and ServiceAccount, legacy resources": `
replicaCount: 1
leaderElection: {enabled: false}
crds: {install: false}
serviceAccount: {create: false, name: platform-controllers}
rbac: {resourceInterfaces: true}
controller: {labelSelector: "shard=a", builtins: false, extraArgs: ["--workers=4"]}
affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: In, values: [system]}]}]}}}
`,
}

func parseValues(t testing.TB, values string) map[string]any {
	t.Helper()
	vals := map[string]any{}
	require.NoError(t, yaml.Unmarshal([]byte(values), &vals))
	return vals
}

// helm lint is clean (no warning, no error) with every value set.
func TestLint(t *testing.T) {
	for name, values := range valueSets {
		t.Run(name, func(t *testing.T) {
			lint := action.NewLint()
			lint.Namespace, lint.KubeVersion = "karta-system", &kubeVersion
			res := lint.Run([]string{chartPath}, parseValues(t, values))
			require.Empty(t, res.Errors)
			require.Equal(t, 1, res.TotalChartsLinted)
			for _, m := range res.Messages {
				assert.Less(t, m.Severity, support.WarningSev, "%s", m)
				t.Log(m)
			}
		})
	}
}

// The default install: the CRD, the controller with two replicas, least
// privilege RBAC, a metrics Service; nothing optional.
func TestRenderDefault(t *testing.T) {
	objs := mustRender(t, "")
	assert.Equal(t, []string{
		"PodDisruptionBudget/karta",
		"ServiceAccount/karta",
		"CustomResourceDefinition/kartas.run.ai",
		"ClusterRole/karta",
		"ClusterRoleBinding/karta",
		"Role/karta-leader-election",
		"RoleBinding/karta-leader-election",
		"Service/karta-metrics",
		"Deployment/karta",
	}, names(objs))
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" && o.GetKind() != "ClusterRole" && o.GetKind() != "ClusterRoleBinding" {
			assert.Equal(t, "karta-system", o.GetNamespace(), "%s/%s", o.GetKind(), o.GetName())
		}
		assert.Equal(t, "karta", o.GetLabels()["app.kubernetes.io/name"], "%s/%s", o.GetKind(), o.GetName())
		assert.Equal(t, "Helm", o.GetLabels()["app.kubernetes.io/managed-by"])
	}
}

func deployment(t testing.TB, objs []*unstructured.Unstructured) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	strictDecode(t, find(t, objs, "Deployment", ""), d)
	require.Len(t, d.Spec.Template.Spec.Containers, 1)
	return d
}

// strictDecode decodes a rendered object into its Go type, failing on any
// field the type does not have.
func strictDecode(t testing.TB, obj *unstructured.Unstructured, into any) {
	t.Helper()
	data, err := yaml.Marshal(obj.Object)
	require.NoError(t, err)
	require.NoError(t, yaml.UnmarshalStrict(data, into), "%s/%s", obj.GetKind(), obj.GetName())
}

// flagValue returns the value of --name=VALUE in args.
func flagValue(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

func port(c corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

// The controller: hardened, probed on its real endpoints, leader elected,
// with flags that `karta controller` has.
func TestDeployment(t *testing.T) {
	d := deployment(t, mustRender(t, ""))
	spec := d.Spec.Template.Spec
	c := spec.Containers[0]

	assert.Equal(t, int32(2), *d.Spec.Replicas)
	assert.Equal(t, "karta:0.1.0", c.Image, "the chart's appVersion")
	assert.Equal(t, "karta", spec.ServiceAccountName)
	assert.Equal(t, d.Spec.Selector.MatchLabels, map[string]string{"app.kubernetes.io/name": "karta", "app.kubernetes.io/instance": "karta"})
	for k, v := range d.Spec.Selector.MatchLabels {
		assert.Equal(t, v, d.Spec.Template.Labels[k])
	}

	// Leader election in the release namespace, on the Lease the Role names.
	require.Equal(t, "controller", c.Args[0])
	for flag, want := range map[string]string{
		"leader-elect": "true", "leader-election-namespace": "karta-system", "leader-election-name": "karta",
		"health-addr": ":8081", "metrics-addr": ":8080", "builtins": "true", "workers": "2", "limit-interval": "1m",
	} {
		got, ok := flagValue(c.Args, flag)
		assert.True(t, ok, "--%s", flag)
		assert.Equal(t, want, got, "--%s", flag)
	}
	_, serve := flagValue(c.Args, "serve")
	assert.False(t, serve, "no webhook without a certificate")

	// Probes on the health port, metrics on the metrics port.
	assert.Equal(t, int32(8081), port(c, "health"))
	assert.Equal(t, int32(8080), port(c, "metrics"))
	for probe, path := range map[*corev1.Probe]string{c.LivenessProbe: "/healthz", c.ReadinessProbe: "/readyz", c.StartupProbe: "/healthz"} {
		require.NotNil(t, probe)
		assert.Equal(t, path, probe.HTTPGet.Path)
		assert.Equal(t, intstr.FromString("health"), probe.HTTPGet.Port)
	}

	// Non-root, read-only, no privilege escalation, RuntimeDefault seccomp:
	// the restricted Pod Security Standard (the integration test runs it
	// in a namespace that enforces it).
	psc := spec.SecurityContext
	require.NotNil(t, psc)
	assert.True(t, *psc.RunAsNonRoot)
	assert.Equal(t, int64(65532), *psc.RunAsUser)
	assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, psc.SeccompProfile.Type)
	sc := c.SecurityContext
	require.NotNil(t, sc)
	assert.False(t, *sc.AllowPrivilegeEscalation)
	assert.True(t, *sc.ReadOnlyRootFilesystem)
	assert.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop)
	assert.False(t, c.Resources.Requests.Cpu().IsZero())
	assert.False(t, c.Resources.Requests.Memory().IsZero())
	assert.False(t, c.Resources.Limits.Memory().IsZero())

	// Replicas prefer different nodes.
	require.NotNil(t, spec.Affinity.PodAntiAffinity)
	term := spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm
	assert.Equal(t, "kubernetes.io/hostname", term.TopologyKey)
	assert.Equal(t, d.Spec.Selector.MatchLabels, term.LabelSelector.MatchLabels)
}

// Every argument the chart gives `karta controller` is one of its flags,
// with a value it accepts: cobra parses them before it prints the help.
func TestControllerArgsAreRealFlags(t *testing.T) {
	bin := buildKarta(t)
	for name, values := range valueSets {
		t.Run(name, func(t *testing.T) {
			c := deployment(t, mustRender(t, values)).Spec.Template.Spec.Containers[0]
			out, err := exec.Command(bin, append(c.Args, "--help")...).CombinedOutput()
			require.NoError(t, err, "karta %s --help:\n%s", strings.Join(c.Args, " "), out)
			assert.Contains(t, string(out), "Run the Karta controller")
		})
	}
	_, err := exec.Command(bin, "controller", "--no-such-flag", "--help").CombinedOutput()
	require.Error(t, err, "the check above can fail")
}

// The webhook: served on every replica with the certificate mounted, behind
// a Service whose port reaches it.
func TestWebhook(t *testing.T) {
	for name, tc := range map[string]struct {
		values string
		secret string
	}{
		"from a Secret":     {valueSets["webhook from a Secret, Karmada, gang output"], "karta-webhook-tls"},
		"from cert-manager": {valueSets["webhook from cert-manager, ServiceMonitor, gang output"], "karta-webhook-tls"},
	} {
		t.Run(name, func(t *testing.T) {
			objs := mustRender(t, tc.values)
			d := deployment(t, objs)
			c := d.Spec.Template.Spec.Containers[0]
			serve, ok := flagValue(c.Args, "serve")
			require.True(t, ok)
			assert.Equal(t, ":8443", serve)
			assert.Equal(t, int32(8443), port(c, "webhook"))
			certFile, _ := flagValue(c.Args, "tls-cert")
			keyFile, _ := flagValue(c.Args, "tls-key")
			require.Len(t, c.VolumeMounts, 1)
			m := c.VolumeMounts[0]
			assert.True(t, m.ReadOnly)
			assert.Equal(t, m.MountPath+"/tls.crt", certFile)
			assert.Equal(t, m.MountPath+"/tls.key", keyFile)
			require.Len(t, d.Spec.Template.Spec.Volumes, 1)
			v := d.Spec.Template.Spec.Volumes[0]
			assert.Equal(t, m.Name, v.Name)
			assert.Equal(t, tc.secret, v.Secret.SecretName)

			svc := &corev1.Service{}
			strictDecode(t, find(t, objs, "Service", "karta-webhook"), svc)
			assert.Equal(t, d.Spec.Selector.MatchLabels, svc.Spec.Selector)
			require.Len(t, svc.Spec.Ports, 1)
			assert.Equal(t, int32(443), svc.Spec.Ports[0].Port)
			assert.Equal(t, intstr.FromString("webhook"), svc.Spec.Ports[0].TargetPort)
		})
	}
}

// cert-manager issues the Secret the pods mount, for the Service's names.
func TestCertManager(t *testing.T) {
	objs := mustRender(t, valueSets["webhook from cert-manager, ServiceMonitor, gang output"])
	issuer := find(t, objs, "Issuer", "karta-selfsigned")
	assert.Equal(t, map[string]any{}, issuer.Object["spec"].(map[string]any)["selfSigned"])
	cert := find(t, objs, "Certificate", "karta-webhook")
	spec := cert.Object["spec"].(map[string]any)
	assert.Equal(t, "karta-webhook-tls", spec["secretName"])
	assert.Equal(t, []any{"karta-webhook", "karta-webhook.karta-system", "karta-webhook.karta-system.svc", "karta-webhook.karta-system.svc.cluster.local"}, spec["dnsNames"])
	assert.Equal(t, map[string]any{"kind": "Issuer", "name": "karta-selfsigned"}, spec["issuerRef"])
	assert.Equal(t, "8760h", spec["duration"])
	assert.Equal(t, "720h", spec["renewBefore"])

	// The pod webhook gets its CA from cert-manager's injector.
	mwc := find(t, objs, "MutatingWebhookConfiguration", "karta-pods")
	assert.Equal(t, "karta-system/karta-webhook", mwc.GetAnnotations()["cert-manager.io/inject-ca-from"])

	// An issuer of the user's: no self-signed one.
	objs = mustRender(t, valueSets["cert-manager with an issuer, Karmada at a URL"])
	for _, o := range objs {
		assert.NotEqual(t, "Issuer", o.GetKind())
	}
	spec = find(t, objs, "Certificate", "karta-webhook").Object["spec"].(map[string]any)
	assert.Equal(t, map[string]any{"kind": "ClusterIssuer", "name": "corp-ca"}, spec["issuerRef"])
}

// Karmada's ResourceInterpreterWebhookConfiguration: the built-ins' kinds,
// the operations the webhook answers, the Service's URL and the CA.
func TestKarmadaWebhookConfiguration(t *testing.T) {
	objs := mustRender(t, valueSets["webhook from a Secret, Karmada, gang output"])
	cfg := find(t, objs, "ResourceInterpreterWebhookConfiguration", "karta")
	assert.Equal(t, "config.karmada.io/v1alpha1", cfg.GetAPIVersion())
	assert.Empty(t, cfg.GetNamespace(), "cluster-scoped")
	hooks := cfg.Object["webhooks"].([]any)
	require.Len(t, hooks, 1)
	hook := hooks[0].(map[string]any)
	assert.Equal(t, map[string]any{"url": "https://karta-webhook.karta-system.svc:443/interpret", "caBundle": caBundle}, hook["clientConfig"])
	assert.Equal(t, []any{"v1alpha1"}, hook["interpreterContextVersions"])
	assert.EqualValues(t, 3, hook["timeoutSeconds"])

	all, err := builtin.All()
	require.NoError(t, err)
	// Each kind with exactly the operations its Karta defines: Karmada
	// takes a refused operation as an error (a PyTorchJob whose
	// InterpretReplica is refused gets no ResourceBinding), so the chart
	// must not send one the Karta does not answer.
	want := map[string][]string{}
	for _, b := range all {
		k := b.Karta.Spec.StructureDefinition.RootComponent.Kind
		if !strings.Contains(k.Group, ".") {
			// Kubernetes' own kinds (Pod, Deployment, Job, …): Karmada
			// interprets them natively, and the chart leaves them to it
			// unless karmada.kinds adds them.
			continue
		}
		p, err := b.Compile(interpreter.Options{})
		require.NoError(t, err)
		var ops []string
		for _, op := range karmada.ForProgram(p).DefinedOperations() {
			ops = append(ops, string(op))
		}
		want[k.Group+"/"+k.Version+"/"+k.Kind] = ops
	}
	got := map[string][]string{}
	for _, r := range hook["rules"].([]any) {
		rule := r.(map[string]any)
		require.Len(t, rule["apiGroups"], 1)
		require.Len(t, rule["apiVersions"], 1)
		require.Len(t, rule["kinds"], 1)
		var ops []string
		for _, op := range rule["operations"].([]any) {
			_, err := karmada.ParseOperation(op.(string))
			assert.NoError(t, err)
			ops = append(ops, op.(string))
		}
		got[rule["apiGroups"].([]any)[0].(string)+"/"+rule["apiVersions"].([]any)[0].(string)+"/"+rule["kinds"].([]any)[0].(string)] = ops
	}
	assert.Equal(t, want, got, "karmada.kinds in values.yaml are the built-in Kartas' kinds, but Kubernetes' own, each with the operations its Karta defines")

	objs = mustRender(t, valueSets["cert-manager with an issuer, Karmada at a URL"])
	hook = find(t, objs, "ResourceInterpreterWebhookConfiguration", "karta").Object["webhooks"].([]any)[0].(map[string]any)
	assert.Equal(t, "https://karta.example.com/interpret", hook["clientConfig"].(map[string]any)["url"])
}

// The pods MutatingWebhookConfiguration of the gang output fails open,
// points at the webhook Service's /mutate-pods (where --pod-webhook serves
// it) and never sees the controller's own namespace nor kube-system.
func TestPodWebhook(t *testing.T) {
	assert.NotContains(t, names(mustRender(t, "")), "MutatingWebhookConfiguration/karta-pods", "off by default")
	assert.NotContains(t, names(mustRender(t, valueSets["gang output without the pod webhook"])), "MutatingWebhookConfiguration/karta-pods")
	objs := mustRender(t, valueSets["webhook from a Secret, Karmada, gang output"])
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	strictDecode(t, find(t, objs, "MutatingWebhookConfiguration", "karta-pods"), mwc)
	require.Len(t, mwc.Webhooks, 1)
	w := mwc.Webhooks[0]
	assert.Equal(t, admissionregistrationv1.Ignore, *w.FailurePolicy)
	assert.Equal(t, admissionregistrationv1.SideEffectClassNone, *w.SideEffects)
	assert.Equal(t, admissionregistrationv1.NeverReinvocationPolicy, *w.ReinvocationPolicy)
	assert.Equal(t, []string{"v1"}, w.AdmissionReviewVersions)
	assert.Equal(t, "karta-webhook", w.ClientConfig.Service.Name)
	assert.Equal(t, "karta-system", w.ClientConfig.Service.Namespace)
	assert.Equal(t, gangoutput.WebhookPath, *w.ClientConfig.Service.Path)
	assert.Equal(t, int32(443), *w.ClientConfig.Service.Port)
	assert.Equal(t, int32(2), *w.TimeoutSeconds)
	assert.Equal(t, caBundle, base64.StdEncoding.EncodeToString(w.ClientConfig.CABundle))
	require.Len(t, w.Rules, 1)
	assert.Equal(t, []string{"pods"}, w.Rules[0].Resources)
	assert.Equal(t, []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, w.Rules[0].Operations)
	assert.Equal(t, &metav1.LabelSelector{
		MatchLabels: map[string]string{"gangs": "on"},
		MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", "karta-system"}},
			{Key: "tier", Operator: metav1.LabelSelectorOpExists},
		},
	}, w.NamespaceSelector, "the user's selector, and never kube-system or the release's namespace")
	assert.Nil(t, w.ObjectSelector)

	// The controller serves it.
	c := deployment(t, objs).Spec.Template.Spec.Containers[0]
	assert.Contains(t, c.Args, "--pod-webhook")
}

// The gang output's arguments: the target, the skip list as given (none
// given: the controller's default; empty: nothing skipped), the selector,
// the queue, the pod webhook.
func TestGangOutputArgs(t *testing.T) {
	for name, tc := range map[string]struct {
		values string
		want   []string
	}{
		"everything": {valueSets["webhook from a Secret, Karmada, gang output"], []string{"--gang-output=volcano",
			"--gang-output-skip=PyTorchJob.kubeflow.org,Job.batch.volcano.sh", "--gang-output-selector=team=ml", "--gang-output-queue=research", "--gang-output-volcano-subgroup-policy", "--pod-webhook"}},
		"nothing skipped, CompositePodGroups": {valueSets["webhook from cert-manager, ServiceMonitor, gang output"], []string{"--gang-output=workload-api", "--gang-output-skip=", "--gang-output-composite-pod-group", "--pod-webhook"}},
		"no pod webhook":                      {valueSets["gang output without the pod webhook"], []string{"--gang-output=kai"}},
		"off":                                 {"", nil},
	} {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, a := range deployment(t, mustRender(t, tc.values)).Spec.Template.Spec.Containers[0].Args {
				if strings.HasPrefix(a, "--gang-output") || a == "--pod-webhook" {
					got = append(got, a)
				}
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// The ServiceMonitor scrapes the metrics Service's port.
func TestServiceMonitor(t *testing.T) {
	objs := mustRender(t, valueSets["webhook from cert-manager, ServiceMonitor, gang output"])
	sm := &monitoringv1.ServiceMonitor{}
	strictDecode(t, find(t, objs, "ServiceMonitor", "karta"), sm)
	svc := &corev1.Service{}
	strictDecode(t, find(t, objs, "Service", "karta-metrics"), svc)
	for k, v := range sm.Spec.Selector.MatchLabels {
		assert.Equal(t, v, svc.Labels[k], "the ServiceMonitor selects the metrics Service by %s", k)
	}
	webhookSvc := find(t, objs, "Service", "karta-webhook")
	assert.NotEqual(t, "metrics", webhookSvc.GetLabels()["app.kubernetes.io/component"], "and not the webhook's")
	require.Len(t, sm.Spec.Endpoints, 1)
	assert.Equal(t, svc.Spec.Ports[0].Name, sm.Spec.Endpoints[0].Port)
	assert.Equal(t, "/metrics", sm.Spec.Endpoints[0].Path)
	assert.Equal(t, intstr.FromString("metrics"), svc.Spec.Ports[0].TargetPort)
	assert.Equal(t, "prometheus", sm.Labels["release"])
}

// The RBAC: what the controller uses (the integration test proves each rule
// is needed), the Lease by name where RBAC allows it.
func TestRBAC(t *testing.T) {
	objs := mustRender(t, "")
	cr := &rbacv1.ClusterRole{}
	strictDecode(t, find(t, objs, "ClusterRole", "karta"), cr)
	assert.Equal(t, append([]rbacv1.PolicyRule{
		{APIGroups: []string{"run.ai"}, Resources: []string{"kartas"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"run.ai"}, Resources: []string{"kartas/status"}, Verbs: []string{"update"}},
	}, referencedRules...), cr.Rules)
	role := &rbacv1.Role{}
	strictDecode(t, find(t, objs, "Role", "karta-leader-election"), role)
	assert.Equal(t, []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{"karta"}, Verbs: []string{"get", "update"}},
	}, role.Rules)
	lease, _ := flagValue(deployment(t, objs).Spec.Template.Spec.Containers[0].Args, "leader-election-name")
	assert.Equal(t, role.Rules[1].ResourceNames, []string{lease})
	for _, kind := range []string{"ClusterRoleBinding", "RoleBinding"} {
		b := &rbacv1.ClusterRoleBinding{}
		strictDecode(t, find(t, objs, kind, ""), b)
		assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "karta", Namespace: "karta-system"}}, b.Subjects)
	}

	// Upstream's resourceinterfaces when asked; no Lease without election;
	// an existing ServiceAccount.
	objs = mustRender(t, valueSets["one replica, no leader election, own CRD and ServiceAccount, legacy resources"])
	strictDecode(t, find(t, objs, "ClusterRole", "karta"), cr)
	assert.Equal(t, append([]rbacv1.PolicyRule{
		{APIGroups: []string{"run.ai"}, Resources: []string{"kartas"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"run.ai"}, Resources: []string{"kartas/status"}, Verbs: []string{"update"}},
		{APIGroups: []string{"optimization.nvidia.com"}, Resources: []string{"resourceinterfaces"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"optimization.nvidia.com"}, Resources: []string{"resourceinterfaces/status"}, Verbs: []string{"update"}},
	}, referencedRules...), cr.Rules)
	assert.Equal(t, []string{
		"ClusterRole/karta", "ClusterRoleBinding/karta", "Service/karta-metrics", "Deployment/karta",
	}, names(objs), "no PDB for one replica, no Lease RBAC, no ServiceAccount, no CRD")
	d := deployment(t, objs)
	assert.Equal(t, "platform-controllers", d.Spec.Template.Spec.ServiceAccountName)
	c := d.Spec.Template.Spec.Containers[0]
	assert.Equal(t, []string{"controller", "--leader-elect=false", "--health-addr=:8081", "--metrics-addr=:8080",
		"--builtins=false", "--workers=2", "--limit-interval=1m", "--selector=shard=a", "--workers=4"}, c.Args)
	assert.Equal(t, "pool", d.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Key)
	assert.Nil(t, d.Spec.Template.Spec.Affinity.PodAntiAffinity, "the user's affinity replaces the default")
}

// referencedRules are the rules of the kinds the built-in Kartas'
// references read, and the Trainer's runtimes, which
// examples/kartas/trainjob-runtime.yaml reads (TestReferencedRBAC checks
// them against the built-ins).
var referencedRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"apps"}, Resources: []string{"replicasets"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"trainer.kubeflow.org"}, Resources: []string{"clustertrainingruntimes", "trainingruntimes"}, Verbs: []string{"get", "list", "watch"}},
}

// The kinds the Kartas' references read: get, list and watch on those of
// the built-ins (every one of them, by its CRD stand-in's plural) and on
// rbac.referencedResources, with or without the gang output.
func TestReferencedRBAC(t *testing.T) {
	plural := crdPlurals(t)
	granted := map[string]bool{}
	for _, r := range referencedRules {
		for _, res := range r.Resources {
			granted[res+"."+r.APIGroups[0]] = true
		}
	}
	all, err := builtin.All()
	require.NoError(t, err)
	for _, b := range all {
		for _, ref := range b.Karta.Spec.References {
			gk := ref.Kind.GVK().GroupKind()
			res, ok := plural[gk]
			require.True(t, ok, "built-in %s references %s, which has no CRD stand-in", b.Name, gk)
			assert.True(t, granted[res+"."+gk.Group], "built-in %s references %s: the chart grants no read access to %s", b.Name, gk, res)
		}
	}

	objs := mustRender(t, "rbac:\n  referencedResources:\n    - {apiGroup: example.com, resources: [runtimes, profiles]}\n")
	cr := &rbacv1.ClusterRole{}
	strictDecode(t, find(t, objs, "ClusterRole", "karta"), cr)
	assert.Equal(t, append(append([]rbacv1.PolicyRule{
		{APIGroups: []string{"run.ai"}, Resources: []string{"kartas"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"run.ai"}, Resources: []string{"kartas/status"}, Verbs: []string{"update"}},
	}, referencedRules...),
		rbacv1.PolicyRule{APIGroups: []string{"example.com"}, Resources: []string{"runtimes", "profiles"}, Verbs: []string{"get", "list", "watch"}},
	), cr.Rules)
}

// The gang output's RBAC: list and watch the target's objects, write them
// (server-side apply: create and patch) and delete them; list and watch
// the pods and every workload and owner kind the built-ins name (and the
// extra ones given); write events. The integration test proves each rule
// is needed.
func TestGangOutputRBAC(t *testing.T) {
	list, write := []string{"list", "watch"}, []string{"create", "patch"}
	base := append([]rbacv1.PolicyRule{
		{APIGroups: []string{"run.ai"}, Resources: []string{"kartas"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"run.ai"}, Resources: []string{"kartas/status"}, Verbs: []string{"update"}},
	}, referencedRules...)
	workloads := withoutReferenced(builtinWorkloadRules(t))
	for _, tc := range []struct {
		target    string
		composite bool
	}{{"workload-api", false}, {"workload-api", true}, {"kai", false}, {"volcano", false}, {"coscheduling", false}} {
		target := tc.target
		t.Run(fmt.Sprintf("%s composite=%v", target, tc.composite), func(t *testing.T) {
			vals := parseValues(t, valueSets["webhook from a Secret, Karmada, gang output"])
			vals["gangOutput"].(map[string]any)["target"] = target
			vals["gangOutput"].(map[string]any)["compositePodGroup"] = tc.composite
			values, err := yaml.Marshal(vals)
			require.NoError(t, err)
			objs := mustRender(t, string(values))
			cr := &rbacv1.ClusterRole{}
			strictDecode(t, find(t, objs, "ClusterRole", "karta"), cr)
			var group string
			var resources []string
			for _, gvk := range (podgroups.Options{CompositePodGroup: tc.composite}).Kinds(podgroups.Target(target)) {
				group = gvk.Group
				resources = append(resources, strings.ToLower(gvk.Kind)+"s")
			}
			sort.Strings(resources)
			want := append(append([]rbacv1.PolicyRule{}, base...),
				rbacv1.PolicyRule{APIGroups: []string{group}, Resources: resources, Verbs: list},
				rbacv1.PolicyRule{APIGroups: []string{group}, Resources: resources, Verbs: write},
				rbacv1.PolicyRule{APIGroups: []string{group}, Resources: resources, Verbs: []string{"delete"}},
				rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: list})
			want = append(want, workloads...)
			want = append(want,
				rbacv1.PolicyRule{APIGroups: []string{"example.com"}, Resources: []string{"trainjobs"}, Verbs: list},
				rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: write})
			assert.Equal(t, want, cr.Rules)
		})
	}
}

// withoutReferenced is rules without the resources referencedRules grant
// already (with get), as the chart leaves them out of the gang output's
// rules: each permission has one rule, so that dropping it breaks something
// (the integration test drops each in turn). A rule left with nothing goes.
func withoutReferenced(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	granted := map[string]bool{}
	for _, r := range referencedRules {
		for _, res := range r.Resources {
			granted[r.APIGroups[0]+"/"+res] = true
		}
	}
	var out []rbacv1.PolicyRule
	for _, r := range rules {
		var left []string
		for _, res := range r.Resources {
			if !granted[r.APIGroups[0]+"/"+res] {
				left = append(left, res)
			}
		}
		if len(left) > 0 {
			r.Resources = left
			out = append(out, r)
		}
	}
	return out
}

// builtinWorkloadRules are the rules the gang output needs to watch the
// built-ins' workload kinds (those with gang instructions), the child
// kinds they name and the default owner kinds.
func builtinWorkloadRules(t *testing.T) []rbacv1.PolicyRule {
	return kindRules(t, func(k *karta.Karta) bool {
		return podgroups.HasGangInstructions(k) && gangoutput.WatchedAsWorkload(k)
	}, gangoutput.DefaultOwnerKinds())
}

// kindRules are list and watch on every kind the built-ins that include
// accepts name (their components' kinds and additional child kinds) and on
// owners, one rule per API group, resources sorted. Plurals come from the
// test cluster's CRD stand-ins (real names) and Kubernetes' own for its
// groups; pods, of the core group, have a rule of their own.
func kindRules(t *testing.T, include func(*karta.Karta) bool, owners []schema.GroupVersionKind) []rbacv1.PolicyRule {
	t.Helper()
	plural := crdPlurals(t)
	byGroup := map[string]map[string]bool{}
	add := func(gvk schema.GroupVersionKind) {
		if gvk.Group == "" {
			return
		}
		res, ok := plural[gvk.GroupKind()]
		require.True(t, ok, "no plural for %s", gvk)
		if byGroup[gvk.Group] == nil {
			byGroup[gvk.Group] = map[string]bool{}
		}
		byGroup[gvk.Group][res] = true
	}
	all, err := builtin.All()
	require.NoError(t, err)
	for _, b := range all {
		if !include(b.Karta) {
			continue
		}
		sd := b.Karta.Spec.StructureDefinition
		for _, c := range sd.Components() {
			if c.Kind != nil {
				add(c.Kind.GVK())
			}
		}
		for _, k := range sd.AdditionalChildKinds {
			add(k.GVK())
		}
	}
	for _, gvk := range owners {
		add(gvk)
	}
	var out []rbacv1.PolicyRule
	for _, g := range slices.Sorted(maps.Keys(byGroup)) {
		out = append(out, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: slices.Sorted(maps.Keys(byGroup[g])), Verbs: []string{"list", "watch"}})
	}
	return out
}

// crdPlurals are the plurals of the kinds the built-ins name: the test
// cluster's CRD stand-ins' (real names) and Kubernetes' own for its groups.
func crdPlurals(t *testing.T) map[schema.GroupKind]string {
	t.Helper()
	plural := map[schema.GroupKind]string{
		{Group: "apps", Kind: "Deployment"}: "deployments", {Group: "apps", Kind: "ReplicaSet"}: "replicasets",
		{Group: "apps", Kind: "StatefulSet"}: "statefulsets", {Group: "batch", Kind: "Job"}: "jobs",
		{Group: "apps", Kind: "DaemonSet"}: "daemonsets", {Group: "batch", Kind: "CronJob"}: "cronjobs",
	}
	files, err := filepath.Glob(filepath.Join(repoRoot, "internal/testenv/crds/*.yaml"))
	require.NoError(t, err)
	for _, f := range files {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, yaml.Unmarshal(data, crd))
		plural[schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}] = crd.Spec.Names.Plural
	}
	return plural
}

// The CRD the chart installs and upgrades is the one `karta crd` prints
// (files/run.ai_kartas.yaml; cmd/karta's TestCRDCommandMatchesTheChart
// keeps the file identical), with the release's labels and, by default,
// Helm's keep policy.
func TestCRD(t *testing.T) {
	want := map[string]any{}
	require.NoError(t, yaml.Unmarshal(readRepoFile(t, "charts/karta/files/run.ai_kartas.yaml"), &want))
	for name, tc := range map[string]struct {
		values string
		keep   bool
	}{
		"kept":     {"", true},
		"not kept": {"crds: {keep: false}", false},
	} {
		t.Run(name, func(t *testing.T) {
			got := find(t, mustRender(t, tc.values), "CustomResourceDefinition", "kartas.run.ai").DeepCopy()
			crd := &apiextensionsv1.CustomResourceDefinition{}
			strictDecode(t, got, crd)
			assert.Equal(t, "karta", got.GetLabels()["app.kubernetes.io/name"])
			_, kept := got.GetAnnotations()["helm.sh/resource-policy"]
			assert.Equal(t, tc.keep, kept)
			if tc.keep {
				assert.Equal(t, "keep", got.GetAnnotations()["helm.sh/resource-policy"])
			}
			meta := got.Object["metadata"].(map[string]any)
			delete(meta, "labels")
			unstructured.RemoveNestedField(got.Object, "metadata", "annotations", "helm.sh/resource-policy")
			assert.Equal(t, want, got.Object, "the rendered CRD is files/run.ai_kartas.yaml")
		})
	}
}

// Value combinations that cannot work fail the render with a message that
// says what to do.
func TestInvalidValues(t *testing.T) {
	for name, tc := range map[string]struct{ values, want string }{
		"webhook without a certificate": {"webhook: {enabled: true}", "webhook.enabled needs a certificate"},
		"Karmada without the webhook":   {"karmada: {webhookConfiguration: true}", "karmada.webhookConfiguration needs webhook.enabled"},
		"Karmada without a CA": {"webhook: {enabled: true, tls: {secretName: s}}\nkarmada: {webhookConfiguration: true}",
			"karmada.webhookConfiguration needs webhook.caBundle"},
		"gang output without a target":    {"gangOutput: {enabled: true}", `gangOutput.target "": want workload-api, kai, volcano or coscheduling`},
		"gang output of another target":   {"gangOutput: {enabled: true, target: yunikorn}", `gangOutput.target "yunikorn": want`},
		"pod webhook without the webhook": {"gangOutput: {enabled: true, target: kai}", "gangOutput.podWebhook.enabled needs webhook.enabled"},
		"pod webhook without a CA": {"webhook: {enabled: true, tls: {secretName: s}}\ngangOutput: {enabled: true, target: kai}",
			"gangOutput.podWebhook.enabled without cert-manager needs webhook.caBundle"},
		"replicas without leader election": {"leaderElection: {enabled: false}", "replicaCount > 1 needs leaderElection.enabled"},
		"no ServiceAccount to use":         {"serviceAccount: {create: false}", "serviceAccount.name: name an existing ServiceAccount"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := render(t, "karta", "karta-system", tc.values)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// Every rendered object of a Kubernetes kind decodes strictly into its Go
// type: no misspelt or misplaced field.
func TestRenderedObjectsDecodeStrictly(t *testing.T) {
	types := map[string]func() any{
		"Deployment":                   func() any { return &appsv1.Deployment{} },
		"Service":                      func() any { return &corev1.Service{} },
		"ServiceAccount":               func() any { return &corev1.ServiceAccount{} },
		"ClusterRole":                  func() any { return &rbacv1.ClusterRole{} },
		"ClusterRoleBinding":           func() any { return &rbacv1.ClusterRoleBinding{} },
		"Role":                         func() any { return &rbacv1.Role{} },
		"RoleBinding":                  func() any { return &rbacv1.RoleBinding{} },
		"CustomResourceDefinition":     func() any { return &apiextensionsv1.CustomResourceDefinition{} },
		"MutatingWebhookConfiguration": func() any { return &admissionregistrationv1.MutatingWebhookConfiguration{} },
		"ServiceMonitor":               func() any { return &monitoringv1.ServiceMonitor{} },
		"PodDisruptionBudget":          func() any { return &policyv1.PodDisruptionBudget{} },
		"ConfigMap":                    func() any { return &corev1.ConfigMap{} },
	}
	for name, values := range valueSets {
		for _, o := range mustRender(t, values) {
			if newT, ok := types[o.GetKind()]; ok {
				strictDecode(t, o, newT())
			} else {
				assert.Contains(t, []string{"Issuer", "Certificate", "ResourceInterpreterWebhookConfiguration"}, o.GetKind(), "%s: a kind without a check", name)
			}
		}
	}
}
