package karmada

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	configv1alpha1 "github.com/karmada-io/karmada/pkg/apis/config/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/resourceinterpreter/customized/webhook"
	"github.com/karmada-io/karmada/pkg/resourceinterpreter/customized/webhook/request"
	"github.com/karmada-io/karmada/pkg/util/fedinformer/genericmanager"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"
)

// revisedReplicas is the replica count every ReviseReplica asks for.
const revisedReplicas = 7

// kartaOperations are the operations `karta serve` answers for a
// built-in Karta: every one but Retain, which a Karta has only when its
// script defines one (no built-in does).
var kartaOperations = []configv1alpha1.InterpreterOperation{
	configv1alpha1.InterpreterOperationInterpretReplica,
	configv1alpha1.InterpreterOperationInterpretComponent,
	configv1alpha1.InterpreterOperationReviseReplica,
	configv1alpha1.InterpreterOperationInterpretStatus,
	configv1alpha1.InterpreterOperationAggregateStatus,
	configv1alpha1.InterpreterOperationInterpretHealth,
	configv1alpha1.InterpreterOperationInterpretDependency,
}

// customizationOperations are those of the Gizmo customization, which
// scripts all of Karmada's.
var customizationOperations = append(append([]configv1alpha1.InterpreterOperation{}, kartaOperations...),
	configv1alpha1.InterpreterOperationRetain)

// builtin is one line of `karta builtin list -o json`.
type builtin struct {
	Name    string `json:"name"`
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// kartaTests is the part of an example's karta_test.yaml that names its
// objects.
type kartaTests struct {
	Tests []struct {
		Object string `json:"object"`
	} `json:"tests"`
}

// subject is one object to ask about, with what the in-process run needs
// besides it.
type subject struct {
	file     string   // the object's file
	observed string   // Retain's observed object
	items    string   // AggregateStatus's items, as a file
	ref      []string // -k NAME or -c CUSTOMIZATION
	ops      []configv1alpha1.InterpreterOperation
}

// tally counts the comparisons made, by operation.
type tally struct {
	mu       sync.Mutex
	answered map[configv1alpha1.InterpreterOperation]int // both answered, and alike
	refused  map[configv1alpha1.InterpreterOperation]int // both refused, with the same message
}

func (n *tally) add(op configv1alpha1.InterpreterOperation, answered bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if answered {
		n.answered[op]++
	} else {
		n.refused[op]++
	}
}

func sum(m map[configv1alpha1.InterpreterOperation]int) int {
	total := 0
	for _, v := range m {
		total += v
	}
	return total
}

// mayRefuse are the operations a Karta may leave undefined for its kind:
// GetReplicas needs one pod-bearing component, ReviseReplica that or a
// replicasPath at the root. Every other one always answers.
var mayRefuse = map[configv1alpha1.InterpreterOperation]bool{
	configv1alpha1.InterpreterOperationInterpretReplica: true,
	configv1alpha1.InterpreterOperationReviseReplica:    true,
}

// TestKarmadaClient calls `karta serve` through Karmada's own webhook
// client for every operation on every built-in's examples (and on the
// Gizmo customization, for Retain), and compares each answer with the one
// `karta karmada run` computes in process.
func TestKarmadaClient(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	bin := buildKarta(t, root, dir)
	certs := newTLS(t, dir)

	gizmo := filepath.Join(root, "cmd", "karta", "testdata", "karmada")
	gizmoCustomization := filepath.Join(gizmo, "pass", "example.io", "v1", "Gizmo", "customizations.yaml")
	srv := startServe(t, bin, certs, "-c", gizmoCustomization)

	var builtins []builtin
	out := runKarta(t, bin, "builtin", "list", "-o", "json")
	require.NoError(t, json.Unmarshal(out, &builtins))
	require.NotEmpty(t, builtins)
	require.Equal(t, len(builtins)+1, srv.kinds, "karta serve serves the built-ins' kinds and Gizmo's; it printed:\n%s", srv.log())

	rules := []configv1alpha1.RuleWithOperations{{
		Operations: customizationOperations,
		Rule:       configv1alpha1.Rule{APIGroups: []string{"example.io"}, APIVersions: []string{"v1"}, Kinds: []string{"Gizmo"}},
	}}
	var subjects []subject
	for _, b := range builtins {
		rules = append(rules, configv1alpha1.RuleWithOperations{
			Operations: kartaOperations,
			Rule:       configv1alpha1.Rule{APIGroups: []string{b.Group}, APIVersions: []string{b.Version}, Kinds: []string{b.Kind}},
		})
		exampleDir := filepath.Join(root, "examples", b.Name)
		data, err := os.ReadFile(filepath.Join(exampleDir, "karta_test.yaml"))
		require.NoError(t, err, "built-in %s has no examples", b.Name)
		var kt kartaTests
		require.NoError(t, yaml.Unmarshal(data, &kt), "examples/%s/karta_test.yaml", b.Name)
		require.NotEmpty(t, kt.Tests, "examples/%s/karta_test.yaml has no objects", b.Name)
		for _, c := range kt.Tests {
			subjects = append(subjects, subject{
				file: filepath.Join(exampleDir, c.Object),
				ref:  []string{"-k", b.Name},
				ops:  kartaOperations,
			})
		}
	}
	subjects = append(subjects, subject{
		file:     filepath.Join(gizmo, "gizmo.yaml"),
		observed: filepath.Join(gizmo, "gizmo-observed.yaml"),
		items:    filepath.Join(gizmo, "status-items.yaml"),
		ref:      []string{"-c", gizmoCustomization},
		ops:      customizationOperations,
	})

	interpreter := newInterpreter(t, "https://"+srv.addr+"/interpret", certs.caPEM, rules)

	n := tally{answered: map[configv1alpha1.InterpreterOperation]int{}, refused: map[configv1alpha1.InterpreterOperation]int{}}
	t.Run("compare", func(t *testing.T) {
		for _, s := range subjects {
			obj := readObject(t, s.file)
			if s.items == "" {
				s.items = writeStatusItems(t, dir, obj)
			}
			rel, err := filepath.Rel(root, s.file)
			require.NoError(t, err)
			for _, op := range s.ops {
				t.Run(rel+"/"+string(op), func(t *testing.T) {
					t.Parallel()
					compare(t, &n, interpreter, bin, s, op, obj)
				})
			}
		}
	})
	total := 0
	for _, s := range subjects {
		total += len(s.ops)
	}
	for _, op := range customizationOperations {
		t.Logf("%-20s %4d answered alike, %4d refused alike", op, n.answered[op], n.refused[op])
	}
	t.Logf("%d objects (%d built-in examples and Gizmo) x their operations: %d compared, %d answered alike, %d refused alike",
		len(subjects), len(subjects)-1, total, sum(n.answered), sum(n.refused))
	if t.Failed() {
		return
	}
	assert.Equal(t, total, sum(n.answered)+sum(n.refused))
	for op, count := range n.refused {
		assert.True(t, mayRefuse[op], "%s refused %d times: every Karta defines it", op, count)
	}
	for _, op := range customizationOperations {
		assert.Positive(t, n.answered[op], "%s never answered", op)
	}
}

// newInterpreter is Karmada's webhook interpreter, configured as Karmada
// configures it from a ResourceInterpreterWebhookConfiguration: one
// webhook at url, trusted through caBundle, for rules.
func newInterpreter(t *testing.T, url string, caBundle []byte, rules []configv1alpha1.RuleWithOperations) *webhook.CustomizedInterpreter {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	// The informer is never started: LoadConfig hands the configuration
	// over, as Karmada's tests and its interpreter's static loading do.
	informer := genericmanager.NewSingleClusterInformerManager(ctx, dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), 0)
	services := corev1listers.NewServiceLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}))
	interpreter, err := webhook.NewCustomizedInterpreter(informer, services)
	require.NoError(t, err)
	timeout := int32(30)
	interpreter.LoadConfig([]*configv1alpha1.ResourceInterpreterWebhookConfiguration{{
		TypeMeta:   metav1.TypeMeta{APIVersion: configv1alpha1.GroupVersion.String(), Kind: "ResourceInterpreterWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: "karta"},
		Webhooks: []configv1alpha1.ResourceInterpreterWebhook{{
			Name:                       "interpreter.karta.run.ai",
			ClientConfig:               admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle},
			Rules:                      rules,
			TimeoutSeconds:             &timeout,
			InterpreterContextVersions: []string{"v1alpha1"},
		}},
	}})
	return interpreter
}

// compare asks Karmada's client and `karta karmada run` for op on obj and
// checks that both answer alike, or both refuse with the same message.
func compare(t *testing.T, n *tally, interpreter *webhook.CustomizedInterpreter, bin string, s subject, op configv1alpha1.InterpreterOperation, obj *unstructured.Unstructured) {
	attrs := &request.Attributes{Operation: op, Object: obj.DeepCopy()}
	args := append([]string{"karmada", "run", "--operation", string(op), "-f", s.file, "-o", "json"}, s.ref...)
	switch op {
	case configv1alpha1.InterpreterOperationReviseReplica:
		attrs.ReplicasSet = revisedReplicas
		args = append(args, "--replicas", fmt.Sprint(revisedReplicas))
	case configv1alpha1.InterpreterOperationAggregateStatus:
		attrs.AggregatedStatus = readStatusItems(t, s.items)
		args = append(args, "--status-items", s.items)
	case configv1alpha1.InterpreterOperationRetain:
		attrs.ObservedObj = readObject(t, s.observed)
		args = append(args, "--observed", s.observed)
	}
	want, refusal := runLocal(t, bin, args)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got, matched, err := call(ctx, interpreter, attrs)
	require.True(t, matched, "Karmada's client found no webhook for %s of %s", op, obj.GroupVersionKind())
	if refusal != "" {
		require.Error(t, err, "karta karmada run refused (%s), Karmada's client got %s", refusal, got)
		// Karmada wraps the webhook's message: "... webhook call failed,
		// get status code: 404, msg: InterpretReplica for kubeflow.org/v1
		// PyTorchJob: <karta's error>".
		assert.Contains(t, err.Error(), refusal)
		if !t.Failed() {
			n.add(op, false)
		}
		return
	}
	require.NoError(t, err, "karta karmada run answered %s", want)
	assert.JSONEq(t, string(want), string(got))
	if !t.Failed() {
		n.add(op, true)
	}
}

// call asks Karmada's client for op and gives its answer as JSON under
// the key `karta karmada run` prints it under, the answer in Karmada's
// types (so a field karta sends that Karmada does not know is not in it).
func call(ctx context.Context, in *webhook.CustomizedInterpreter, attrs *request.Attributes) (json.RawMessage, bool, error) {
	var (
		answer  any
		matched bool
		err     error
	)
	switch attrs.Operation {
	case configv1alpha1.InterpreterOperationInterpretReplica:
		var replicas int32
		var requires *workv1alpha2.ReplicaRequirements
		replicas, requires, matched, err = in.GetReplicas(ctx, attrs)
		a := map[string]any{"replica": replicas}
		if requires != nil {
			a["requires"] = requires
		}
		answer = a
	case configv1alpha1.InterpreterOperationInterpretComponent:
		var components []workv1alpha2.Component
		components, matched, err = in.GetComponents(ctx, attrs)
		if components == nil {
			// Karmada's ResourceInterpreterResponse omits an empty list
			// (omitempty): none and an empty list are one answer.
			components = []workv1alpha2.Component{}
		}
		answer = map[string]any{"components": components}
	case configv1alpha1.InterpreterOperationReviseReplica, configv1alpha1.InterpreterOperationAggregateStatus, configv1alpha1.InterpreterOperationRetain:
		var obj *unstructured.Unstructured
		obj, matched, err = in.Patch(ctx, attrs)
		key := map[configv1alpha1.InterpreterOperation]string{
			configv1alpha1.InterpreterOperationReviseReplica:   "revised",
			configv1alpha1.InterpreterOperationAggregateStatus: "aggregatedStatus",
			configv1alpha1.InterpreterOperationRetain:          "retained",
		}[attrs.Operation]
		if obj != nil {
			answer = map[string]any{key: obj.Object}
		}
	case configv1alpha1.InterpreterOperationInterpretStatus:
		var status *runtime.RawExtension
		status, matched, err = in.ReflectStatus(ctx, attrs)
		raw := json.RawMessage("null")
		if status != nil && len(status.Raw) > 0 {
			raw = status.Raw
		}
		answer = map[string]any{"status": raw}
	case configv1alpha1.InterpreterOperationInterpretHealth:
		var healthy bool
		healthy, matched, err = in.InterpretHealth(ctx, attrs)
		answer = map[string]any{"healthy": healthy}
	case configv1alpha1.InterpreterOperationInterpretDependency:
		var deps []configv1alpha1.DependentObjectReference
		deps, matched, err = in.GetDependencies(ctx, attrs)
		if deps == nil {
			deps = []configv1alpha1.DependentObjectReference{} // omitted when empty, as components
		}
		answer = map[string]any{"dependencies": deps}
	default:
		return nil, false, fmt.Errorf("operation %s: not one this test knows", attrs.Operation)
	}
	if err != nil || !matched {
		return nil, matched, err
	}
	out, merr := json.Marshal(answer)
	return out, matched, merr
}

// runLocal runs `karta karmada run`: its JSON answer, or, when it refuses
// (exit 1), its message without the file's name before it.
func runLocal(t *testing.T, bin string, args []string) (json.RawMessage, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		msg := strings.TrimSpace(stderr.String())
		file := args[slicesIndex(args, "-f")+1]
		require.True(t, strings.HasPrefix(msg, file+": "), "karta %s: the message does not start with the file: %s", strings.Join(args, " "), msg)
		msg = strings.TrimPrefix(msg, file+": ")
		require.NotContains(t, msg, "\n", "karta %s: one message expected", strings.Join(args, " "))
		return nil, msg
	}
	require.NoError(t, err, "karta %s:\n%s", strings.Join(args, " "), stderr.String())
	require.True(t, json.Valid(stdout.Bytes()), "karta %s printed no JSON: %s", strings.Join(args, " "), stdout.String())
	return stdout.Bytes(), ""
}

func slicesIndex(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// runKarta runs the karta command and returns what it printed.
func runKarta(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(bin, args...).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		t.Fatalf("karta %s: %v\n%s", strings.Join(args, " "), err, exit.Stderr)
	}
	require.NoError(t, err)
	return out
}

// readObject reads the one object of a YAML file.
func readObject(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	js, err := yaml.YAMLToJSON(data)
	require.NoError(t, err, file)
	obj := &unstructured.Unstructured{}
	require.NoError(t, obj.UnmarshalJSON(js), file)
	return obj
}

// writeStatusItems writes what two member clusters would report for obj,
// its own status in each (one healthy, one not), for AggregateStatus, and
// returns the file.
func writeStatusItems(t *testing.T, dir string, obj *unstructured.Unstructured) string {
	t.Helper()
	items := []workv1alpha2.AggregatedStatusItem{
		{ClusterName: "member1", Applied: true, Health: workv1alpha2.ResourceHealthy},
		{ClusterName: "member2", Applied: true, Health: workv1alpha2.ResourceUnhealthy},
	}
	if status, ok := obj.Object["status"]; ok {
		raw, err := json.Marshal(status)
		require.NoError(t, err)
		for i := range items {
			items[i].Status = &runtime.RawExtension{Raw: raw}
		}
	}
	data, err := json.Marshal(items)
	require.NoError(t, err)
	f, err := os.CreateTemp(dir, "status-items-*.json")
	require.NoError(t, err)
	_, err = f.Write(data)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return f.Name()
}

// readStatusItems reads a list of AggregatedStatusItem (YAML or JSON).
func readStatusItems(t *testing.T, file string) []workv1alpha2.AggregatedStatusItem {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var items []workv1alpha2.AggregatedStatusItem
	require.NoError(t, yaml.UnmarshalStrict(data, &items), file)
	return items
}
