package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/internal/corpus"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/isolation"
	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/karta"
)

// A Karta that reads its TrainJob's runtime answers InterpretComponent
// with the runtime's jobs when the handler has a resolver that holds it;
// without one, or without the runtime, the answer says which reference
// was absent in a Warning header, and succeeds on what the Karta makes
// of the absence. The same in a worker process (the cluster's Kartas run
// isolated), where the supervisor resolves.
func TestReferencesAnswerAndWarnings(t *testing.T) {
	sup, err := isolation.NewSupervisor(isolation.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sup.Close() })
	ks, err := karta.LoadFile("../examples/kartas/trainjob-runtime.yaml")
	require.NoError(t, err)
	p, err := interpreter.Compile(ks[0], interpreter.Options{})
	require.NoError(t, err)
	reg := interpreter.NewRegistry()
	reg.Put(p)
	runtime, err := corpus.LoadObjects("../examples/trainjob/refs/torchtune-llama3.2-3b.yaml")
	require.NoError(t, err)
	body := kartaReview(t, "u-comp", karmada.OpInterpretComponent, "../examples/trainjob/running.yaml", nil)

	for _, tc := range []struct {
		name       string
		resolver   interpreter.Resolver
		components []string
		warnings   []string
	}{
		{"resolved", interpreter.NewStaticResolver(runtime...), []string{"dataset-initializer", "model-initializer", "node"}, nil},
		{"no resolver", nil, nil, []string{`299 karta "karta \"trainjob-runtime\": reference \"cluster\": no resolver: absent"`}},
		{"missing", interpreter.NewStaticResolver(), nil,
			[]string{`299 karta "karta \"trainjob-runtime\": reference \"cluster\": ClusterTrainingRuntime torchtune-llama3.2-3b not found: null"`}},
	} {
		for _, isolated := range []bool{false, true} {
			kartas := Kartas{Registry: reg}
			if isolated {
				kartas.Workers = sup
			}
			t.Run(fmt.Sprintf("%s/isolated=%t", tc.name, isolated), func(t *testing.T) {
				h := New(Options{References: tc.resolver}, kartas)
				r := httptest.NewRequest(http.MethodPost, InterpretPath, bytes.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				assert.Equal(t, tc.warnings, w.Header().Values("Warning"))

				_, resp := post(t, h, body)
				require.True(t, resp.Response.Successful, "%+v", resp.Response.Status)
				var names []string
				for _, c := range resp.Response.Components {
					names = append(names, c.Name)
				}
				assert.Equal(t, tc.components, names)
			})
		}
	}
}

// trainJobRuntime is the torchtune ClusterTrainingRuntime of
// examples/trainjob/running.yaml with a job the runtimes Trainer ships do
// not have, an evaluator of 2 replicas × parallelism 3, so that what
// Karmada is told can only come from the runtime.
func trainJobRuntime(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	objs, err := corpus.LoadObjects("../examples/trainjob/refs/torchtune-llama3.2-3b.yaml")
	require.NoError(t, err)
	rt := objs[0]
	jobs, _, err := unstructured.NestedSlice(rt.Object, "spec", "template", "spec", "replicatedJobs")
	require.NoError(t, err)
	evaluator := map[string]any{"name": "evaluator", "replicas": int64(2), "template": map[string]any{"spec": map[string]any{"parallelism": int64(3),
		"template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "eval", "image": "eval:1", "resources": map[string]any{"requests": map[string]any{"cpu": "2"}}}}}}}}}
	require.NoError(t, unstructured.SetNestedSlice(rt.Object, append(jobs, evaluator), "spec", "template", "spec", "replicatedJobs"))
	return rt
}

// karta serve answers Karmada for the built-in TrainJob with its
// ClusterTrainingRuntime from the resolver (its cache, in a cluster):
// InterpretComponent gives the runtime's jobs and pod counts, with the
// TrainJob's overrides applied (the node's selector and toleration), and
// InterpretDependency the runtime's volume claim and the model
// initializer's secret — what Karmada's own Lua cannot read. Without the
// runtime, the built-in's fragments answer and a Warning header names the
// runtime. InterpretReplica and ReviseReplica are not defined for a
// TrainJob (several pod-bearing components); health and status do not
// read the runtime. The same in a worker process.
func TestServeTrainJobWithItsRuntime(t *testing.T) {
	sup, err := isolation.NewSupervisor(isolation.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sup.Close() })
	reg, err := builtin.Registry(interpreter.Options{})
	require.NoError(t, err)
	const job = "../examples/trainjob/running.yaml"
	type component struct {
		Name      string
		Replicas  int32
		NodeClaim bool
	}
	withRuntime := []component{{"dataset-initializer", 1, false}, {"model-initializer", 1, false}, {"node", 1, true}, {"evaluator", 6, false}}
	fragments := []component{{"dataset-initializer", 1, false}, {"model-initializer", 1, false}, {"node", 1, false}}
	missing := []string{`299 karta "karta \"trainjob\": reference \"clusterTrainingRuntime\": ClusterTrainingRuntime torchtune-llama3.2-3b not found: null"`}

	for _, tc := range []struct {
		name         string
		resolver     interpreter.Resolver
		components   []component
		dependencies []string
		warnings     []string
	}{
		{"resolved", interpreter.NewStaticResolver(trainJobRuntime(t)), withRuntime,
			[]string{"PersistentVolumeClaim llm-team/initializer", "Secret llm-team/hf-token"}, nil},
		{"missing", interpreter.NewStaticResolver(), fragments, nil, missing},
	} {
		for _, isolated := range []bool{false, true} {
			kartas := Kartas{Registry: reg}
			if isolated {
				kartas.Workers = sup
			}
			h := New(Options{References: tc.resolver}, kartas)
			ask := func(t *testing.T, op karmada.Operation, fields map[string]any) *ResourceInterpreterResponse {
				t.Helper()
				r := httptest.NewRequest(http.MethodPost, InterpretPath, bytes.NewReader(kartaReview(t, "u-"+string(op), op, job, fields)))
				r.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				require.Equal(t, http.StatusOK, w.Code)
				if op == karmada.OpInterpretComponent || op == karmada.OpInterpretDependency {
					assert.Equal(t, tc.warnings, w.Header().Values("Warning"), "%s", op)
				}
				var out ResourceInterpreterContext
				require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out), w.Body.String())
				require.NotNil(t, out.Response)
				return out.Response
			}
			t.Run(fmt.Sprintf("%s/isolated=%t", tc.name, isolated), func(t *testing.T) {
				resp := ask(t, karmada.OpInterpretComponent, nil)
				require.True(t, resp.Successful, "%+v", resp.Status)
				var comps []component
				for _, c := range resp.Components {
					comps = append(comps, component{c.Name, c.Replicas, c.ReplicaRequirements != nil && c.ReplicaRequirements.NodeClaim != nil})
				}
				assert.Equal(t, tc.components, comps)

				resp = ask(t, karmada.OpInterpretDependency, nil)
				require.True(t, resp.Successful, "%+v", resp.Status)
				var deps []string
				for _, d := range resp.Dependencies {
					deps = append(deps, d.Kind+" "+d.Namespace+"/"+d.Name)
				}
				assert.Equal(t, tc.dependencies, deps)

				for _, op := range []karmada.Operation{karmada.OpInterpretReplica, karmada.OpReviseReplica} {
					resp = ask(t, op, map[string]any{"replicas": 2})
					assert.False(t, resp.Successful)
					require.NotNil(t, resp.Status)
					assert.Equal(t, int32(http.StatusNotFound), resp.Status.Code)
					assert.Contains(t, resp.Status.Message, "is not defined: ")
				}

				resp = ask(t, karmada.OpInterpretHealth, nil)
				require.True(t, resp.Successful, "%+v", resp.Status)
				require.NotNil(t, resp.Healthy)
				assert.True(t, *resp.Healthy)

				resp = ask(t, karmada.OpInterpretStatus, nil)
				require.True(t, resp.Successful, "%+v", resp.Status)
				assert.Contains(t, string(resp.RawStatus.Raw), `"jobsStatus"`)
			})
		}
	}
}
