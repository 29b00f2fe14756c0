package interpreter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/karta"
)

// The differential tests: the Program's hooks (each expression on its
// chosen back end), the same algorithms on gojq (gojqEvaluator), and the
// Karta's expressions on the portable Lua the exports ship (luaEvaluator)
// must give the same results and the same errors (which path runs is not
// observable).

// diffFixture is one Karta of a testdata directory with the objects of its
// root kind and every pod of the directory, without two pods of one name
// (pods of other workloads make unmatched cases, which must agree too).
type diffFixture struct {
	name string
	k    *karta.Karta
	objs []*unstructured.Unstructured
	pods []*unstructured.Unstructured
}

// addPods appends the pods whose namespace/name is not already in pods.
func addPods(pods []*unstructured.Unstructured, more ...*unstructured.Unstructured) []*unstructured.Unstructured {
	for _, m := range more {
		if !slices.ContainsFunc(pods, func(p *unstructured.Unstructured) bool {
			return p.GetNamespace() == m.GetNamespace() && p.GetName() == m.GetName()
		}) {
			pods = append(pods, m)
		}
	}
	return pods
}

// diffFixtures collects the Karta fixtures of testdata/gang, testdata/revise
// and testdata/program, pairing each Karta with the objects of its kind.
func diffFixtures(t *testing.T) []diffFixture {
	t.Helper()
	var out []diffFixture
	for _, dir := range []string{filepath.Join("testdata", "gang"), filepath.Join("testdata", "revise"), progProgramDir} {
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		require.NoError(t, err)
		sort.Strings(files)
		var kartas []string
		var objs, pods []*unstructured.Unstructured
		for _, f := range files {
			switch {
			case strings.HasSuffix(f, ".karta.yaml"):
				kartas = append(kartas, f)
			case strings.HasSuffix(f, ".pods.yaml"):
				pods = addPods(pods, progObjFile(t, f)...)
			default:
				objs = append(objs, progObjFile(t, f)...)
			}
		}
		require.NotEmpty(t, kartas, dir)
		for _, f := range kartas {
			k := progKartaFile(t, f)
			gvk := k.Spec.StructureDefinition.RootComponent.Kind.GVK()
			fx := diffFixture{name: f, k: k, pods: pods}
			for _, o := range objs {
				if o.GroupVersionKind() == gvk {
					fx.objs = append(fx.objs, o)
				}
			}
			require.NotEmpty(t, fx.objs, "%s: no object of kind %s in %s", f, gvk, dir)
			out = append(out, fx)
		}
	}
	// The example Karta runs on the PyTorchJob objects of testdata/gang.
	k := progKartaFile(t, examplePyTorchJob)
	var objs []*unstructured.Unstructured
	for _, f := range []string{"pytorchjob.yaml", "pytorchjob-elastic.yaml"} {
		objs = append(objs, progObjFile(t, filepath.Join("testdata", "gang", f))...)
	}
	pods := progObjFile(t, filepath.Join("testdata", "gang", "pytorchjob.pods.yaml"))
	pods = addPods(pods, progObjFile(t, filepath.Join("testdata", "gang", "pytorchjob-elastic.pods.yaml"))...)
	out = append(out, diffFixture{name: examplePyTorchJob, k: k, objs: objs, pods: pods})
	return out
}

// hookCause is what a hook error says without the `karta "NAME": HOOK: `
// prefix, to compare with the error of the gojq run.
func hookCause(t testing.TB, p *Program, h Hook, err error) string {
	t.Helper()
	var he *HookError
	require.True(t, errors.As(err, &he), "want a *HookError, got %T: %v", err, err)
	assert.Equal(t, p.Name(), he.Karta)
	assert.Equal(t, h, he.Hook)
	return he.Err.Error()
}

// assertSameSpecs runs GetPodSpecs both ways on obj and requires the same
// items or the same error.
func assertSameSpecs(t *testing.T, p *Program, obj *unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	want, wantErr := p.podSpecs(ctx, gojqEvaluator{}, obj.Object)
	got, gotErr := p.GetPodSpecs(ctx, obj)
	if wantErr != nil {
		require.Error(t, gotErr, "gojq fails with %v; the hook must fail too", wantErr)
		assert.Equal(t, wantErr.Error(), hookCause(t, p, HookGetPodSpecs, gotErr))
		return
	}
	require.NoError(t, gotErr)
	assert.Equal(t, want, got)
}

// assertSameGang runs GetGangGroups both ways and requires equal results.
func assertSameGang(t *testing.T, p *Program, obj *unstructured.Unstructured, pods []*unstructured.Unstructured) *GangResult {
	t.Helper()
	ctx := context.Background()
	podObjs := make([]map[string]any, len(pods))
	for i, pod := range pods {
		podObjs[i] = pod.Object
	}
	want, wantErr := p.gang.gangGroups(ctx, gojqEvaluator{}, obj.Object, podObjs)
	got, gotErr := p.GetGangGroups(ctx, obj, pods)
	if wantErr != nil {
		require.Error(t, gotErr, "gojq fails with %v; the hook must fail too", wantErr)
		assert.Equal(t, wantErr.Error(), hookCause(t, p, HookGetGangGroups, gotErr))
		return nil
	}
	require.NoError(t, gotErr)
	assert.Equal(t, want, got)
	assertGangInvariants(t, podObjs, got)
	return got
}

func TestDifferentialFixtures(t *testing.T) {
	placed, unmatched := 0, 0
	for _, fx := range diffFixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			p := progCompile(t, fx.k, Options{})
			for _, obj := range fx.objs {
				t.Run(obj.GetName(), func(t *testing.T) {
					assertSameSpecs(t, p, obj)
					if res := assertSameGang(t, p, obj, fx.pods); res != nil {
						placed += len(res.Placements)
						unmatched += len(res.Unmatched)
					}
					// Each pod alone, too: the gang algorithm's scope
					// changes with the pods it sees.
					for _, pod := range fx.pods {
						assertSameGang(t, p, obj, []*unstructured.Unstructured{pod})
					}
				})
			}
		})
	}
	// The comparison covers both outcomes, many times over.
	assert.Greater(t, placed, 40)
	assert.Greater(t, unmatched, 40)
}

// TestDifferentialAccessors evaluates every jq expression of every fixture
// Karta on every object and pod on the portable Lua and on gojq: the
// outputs, or the error messages, must be identical.
func TestDifferentialAccessors(t *testing.T) {
	for _, fx := range diffFixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			var exprs []string
			for _, ref := range collectPaths(fx.k) {
				if !slices.Contains(exprs, ref.expr) {
					exprs = append(exprs, ref.expr)
				}
			}
			slices.Sort(exprs)
			inputs := append(append([]*unstructured.Unstructured{}, fx.objs...), fx.pods...)
			c := compareLuaWithGojq(t, exprs, inputs)
			assert.Positive(t, c.outputs)
		})
	}
}

// compared counts what compareLuaWithGojq compared: the expressions that
// run as Lua, and the outputs and errors of their evaluations.
type compared struct{ translated, outputs, errs int }

// compareLuaWithGojq evaluates each expression that translates on the
// portable Lua (luaEvaluator) and on gojq, on every input: the outputs,
// or the error messages, must be identical.
func compareLuaWithGojq(t *testing.T, exprs []string, inputs []*unstructured.Unstructured) compared {
	t.Helper()
	ctx := context.Background()
	lua := newLuaEvaluator(t, exprs)
	var c compared
	for _, e := range exprs {
		if !lua.translated(e) {
			continue
		}
		c.translated++
		prog, err := compileJQ(e)
		require.NoError(t, err)
		for _, in := range inputs {
			want, wantErr := gojqEvaluator{}.all(ctx, prog, in.Object)
			got, gotErr := lua.all(ctx, prog, in.Object)
			if wantErr != nil {
				c.errs++
				if assert.Error(t, gotErr, "jq %s on %s: gojq fails with %v", e, in.GetName(), wantErr) {
					assert.Equal(t, wantErr.Error(), gotErr.Error(), "jq %s on %s", e, in.GetName())
				}
				continue
			}
			if assert.NoError(t, gotErr, "jq %s on %s", e, in.GetName()) {
				assert.Equal(t, normalJSON(t, want), normalJSON(t, got), "jq %s on %s", e, in.GetName())
				c.outputs += len(want)
			}
		}
	}
	return c
}

// normalJSON makes outputs comparable across the two paths: gojq passes
// json.Number literals through where Lua has numbers, which print alike.
func normalJSON(t testing.TB, outs []any) []any {
	t.Helper()
	v, err := jsonValue(outs)
	require.NoError(t, err)
	if v == nil {
		return []any{}
	}
	return v.([]any)
}

// diffCase is an object made to fail or to take an unusual branch.
type diffCase struct {
	name  string
	karta string // a file under testdata
	obj   string
}

// TestDifferentialEdges compares the two paths on objects that hit the
// error and edge branches of instances, zipping, presence and scale
// values.
func TestDifferentialEdges(t *testing.T) {
	cases := []diffCase{{
		name:  "PyTorchJob without a Master",
		karta: examplePyTorchJob,
		obj: `
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: workers-only, namespace: ml}
spec:
  pytorchReplicaSpecs:
    Worker: {replicas: 2, template: {spec: {containers: [{name: pytorch, image: pytorch:2.5}]}}}`,
	}, {
		name:  "replica specs as an array is a jq error",
		karta: examplePyTorchJob,
		obj: `
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: bad, namespace: ml}
spec:
  pytorchReplicaSpecs: [{replicas: 1}]`,
	}, {
		name:  "worker replicas 2.5",
		karta: examplePyTorchJob,
		obj: `
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: bad, namespace: ml}
spec:
  pytorchReplicaSpecs:
    Worker: {replicas: 2.5, template: {spec: {containers: []}}}`,
	}, {
		name:  "duplicate replicated job names",
		karta: filepath.Join(progProgramDir, "jobset.karta.yaml"),
		obj: `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: dup, namespace: ns}
spec:
  replicatedJobs:
  - {name: w, template: {spec: {template: {spec: {}}}}}
  - {name: w, template: {spec: {template: {spec: {}}}}}`,
	}, {
		name:  "numeric replicated job names",
		karta: filepath.Join(progProgramDir, "jobset.karta.yaml"),
		obj: `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: num, namespace: ns}
spec:
  replicatedJobs:
  - {name: 1, replicas: 2, template: {spec: {parallelism: 3, template: {spec: {}}}}}
  - {name: 2.5, template: {spec: {template: {spec: {}}}}}`,
	}, {
		name:  "a replicated job without a template is absent",
		karta: filepath.Join(progProgramDir, "jobset.karta.yaml"),
		obj: `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: partial, namespace: ns}
spec:
  replicatedJobs:
  - {name: a, template: {spec: {template: {spec: {}}}}}
  - {name: b, replicas: 2}`,
	}, {
		name:  "a template that is a string",
		karta: filepath.Join(progProgramDir, "jobset.karta.yaml"),
		obj: `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: bad, namespace: ns}
spec:
  replicatedJobs:
  - {name: a, template: {spec: {template: "nope"}}}`,
	}, {
		name:  "predictor labels that are not strings",
		karta: filepath.Join(progProgramDir, "inferenceservice.karta.yaml"),
		obj: `
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: bad, namespace: ns}
spec:
  predictor:
    labels: {replicas: 3}
    model: {storageUri: s3://m}`,
	}, {
		name:  "Knative scale 2x",
		karta: filepath.Join(progProgramDir, "knative-service.karta.yaml"),
		obj: `
apiVersion: serving.knative.dev/v1
kind: Service
metadata: {name: bad, namespace: ns}
spec:
  template:
    metadata: {annotations: {autoscaling.knative.dev/initial-scale: 2x}}
    spec: {containers: [{image: hello}]}`,
	}, {
		name:  "Knative numeric annotations out of range",
		karta: filepath.Join(progProgramDir, "knative-service.karta.yaml"),
		obj: `
apiVersion: serving.knative.dev/v1
kind: Service
metadata: {name: bad, namespace: ns}
spec:
  template:
    metadata: {annotations: {autoscaling.knative.dev/initial-scale: 2147483648}}
    spec: {containers: [{image: hello}]}`,
	}, {
		name:  "RayJob worker groups without names",
		karta: filepath.Join(progProgramDir, "rayjob.karta.yaml"),
		obj: `
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: bad, namespace: ray}
spec:
  rayClusterSpec:
    headGroupSpec: {template: {spec: {}}}
    workerGroupSpecs:
    - {replicas: 1, template: {spec: {}}}`,
	}}
	kartas := map[string]*Program{}
	for _, tc := range cases {
		if kartas[tc.karta] == nil {
			kartas[tc.karta] = progCompile(t, progKartaFile(t, tc.karta), Options{})
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := kartas[tc.karta]
			obj := progObj(t, tc.obj)
			assertSameSpecs(t, p, obj)
			assertSameGang(t, p, obj, nil)
		})
	}
}

// TestDifferentialGVKPairing guards the fixture pairing itself: every
// directory contributes Kartas, and every Karta of testdata/program has
// pods whose namespace is that of an object.
func TestDifferentialGVKPairing(t *testing.T) {
	fxs := diffFixtures(t)
	byDir := map[string]int{}
	for _, fx := range fxs {
		byDir[filepath.Dir(fx.name)]++
	}
	for _, dir := range []string{filepath.Join("testdata", "gang"), filepath.Join("testdata", "revise"), progProgramDir} {
		assert.Positive(t, byDir[dir], dir)
	}
	entries, err := os.ReadDir(progProgramDir)
	require.NoError(t, err)
	kinds := map[schema.GroupVersionKind]bool{}
	for _, fx := range fxs {
		kinds[fx.k.Spec.StructureDefinition.RootComponent.Kind.GVK()] = true
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".karta.yaml") || strings.HasSuffix(e.Name(), ".pods.yaml") || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		for _, o := range progObjFile(t, filepath.Join(progProgramDir, e.Name())) {
			assert.True(t, kinds[o.GroupVersionKind()], "%s: %s has no Karta", e.Name(), o.GroupVersionKind())
		}
	}
}

// roomyLimits give a test that runs many evaluations in one call a
// deadline no machine load reaches.
var roomyLimits = Options{Limits: Limits{Timeout: 5 * time.Minute}}

// diffExpressions exercise the translated jq subset of docs/jq.md (and a few
// fallbacks to gojq) on real objects, errors included.
var diffExpressions = []string{
	`.metadata.name`, `."metadata"."namespace"`, `.["spec"]["replicatedJobs"]`,
	`.spec.replicatedJobs[0].name`, `.spec.replicatedJobs[-1].name`, `.spec.replicatedJobs[1:]`,
	`.spec.replicatedJobs[:1] | length`, `.spec.replicatedJobs[]?.replicas`, `.spec.replicatedJobs[].name`,
	`.metadata[0]`, `.metadata.name[0:3]`, `.spec[]?`, `.status.conditions[]? | .type`,
	`.metadata.name, .metadata.namespace`, `.spec.suspend // "unset"`, `(.spec.nope // .metadata).name`,
	`null`, `1.5`, `"lit"`, `[1, "a", null]`, `{a: .metadata.name, b: 2}`, `"\(.metadata.name)/\(.metadata.namespace)"`,
	`.metadata.name == "flowers"`, `.spec != null`, `.metadata < .spec`, `.spec.replicas <= 2`, `.status > 1`, `[] >= {}`,
	`.spec.suspend and true`, `.spec.suspend or .metadata.name`, `.spec.suspend | not`,
	`(.spec.replicas // 1) + 1`, `.metadata.name + "-x"`, `.metadata.labels + {x: "y"}`, `[1] - [1, 2]`,
	`(.spec.replicas // 3) * 2`, `"ab" * 0`, `4 / 2`, `3 / 2`, `.metadata.name / "-"`, `7 % 3`, `.metadata.name - 1`,
	`if .spec.suspend then "suspended" elif .status then "has status" else "new" end`,
	`.status.conditions[]? | select(.status == "True") | .type`, `empty`, `[.status.conditions[]?.type] | length`,
	`.metadata | keys`, `.metadata | has("uid")`, `.spec | to_entries | map(.key)`, `.metadata.labels | length`,
	`first(.status.conditions[]? | select(.type == "Ready"))`, `[.spec.replicatedJobs[]?.replicas] | add`,
	`.metadata | tostring`, `.metadata.annotations[]? | tonumber? // "nan"`, `.spec | type`, `.metadata.name | tonumber`,
	`.metadata.labels | to_entries[] | "\(.key)=\(.value)"`, `[.spec.replicatedJobs[]? | .replicas // 1] | map(. * 2)`,
	`.metadata.name | test("^[a-z]+")`, `[.status.conditions[]? | .type] | sort | unique`, `.metadata.name | ascii_upcase`,
	`reduce (.spec.replicatedJobs[]? | .replicas // 1) as $r (0; . + $r)`, `.metadata.name | split("-") | .[0]`,
	`.spec.big`, `.spec.exp * 1`, `.spec.replicas == 3`,
	`-(.spec.replicas // 2)`, `.metadata.name | length`, `.spec.template.metadata.annotations | keys[]?`,
}

// TestDifferentialExpressions compares diffExpressions on the portable
// Lua with gojq on every fixture object and pod.
func TestDifferentialExpressions(t *testing.T) {
	// Number literals as the CLI decodes them (json.Number): an integral
	// float, an exponent, an integer beyond 2^53.
	inputs := []*unstructured.Unstructured{progObj(t, `
apiVersion: example.com/v1
kind: Any
metadata: {name: numbers, namespace: ns}
spec: {replicas: 3.0, exp: 1e2, big: 12345678901234567890, half: 0.5}
`)}
	for _, fx := range diffFixtures(t) {
		inputs = append(inputs, fx.objs...)
		inputs = addPods(inputs, fx.pods...)
	}
	c := compareLuaWithGojq(t, diffExpressions, inputs)
	assert.Greater(t, c.translated, len(diffExpressions)/2, "most of the expressions run as Lua")
	assert.Positive(t, c.outputs)
	assert.Positive(t, c.errs)
}

// expressionsKarta is a Karta whose only jq expressions are exprs, one
// byExpression matcher each, so that each gets a generated accessor.
func expressionsKarta(name string, exprs []string) string {
	var b strings.Builder
	b.WriteString(`
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: ` + name + `}
spec:
  structureDefinition:
    rootComponent:
      name: root
      kind: {group: example.com, version: v1, kind: Any}
      statusDefinition:
        statusMappings:
          running:
`)
	for _, e := range exprs {
		b.WriteString("          - byExpression: {expression: " + strconvQuoteYAML(e) + ", expectedResult: x}\n")
	}
	return b.String()
}

// strconvQuoteYAML quotes a jq expression as a YAML double-quoted scalar.
func strconvQuoteYAML(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// TestKnownBugJQNumberLiterals: KNOWN BUG in jqlua/luaapi (not owned here).
// Objects are decoded with their number literals kept (json.Number), and
// gojq keeps them: `3.0 | tostring` is "3.0", `1e2 | tostring` is "1e2";
// 1e1000 is +Inf, printed as 1.7976931348623157e+308. The portable Lua
// the exports ship reads numbers as Lua numbers, so tostring gives "3"
// and "100", and an infinite output is no JSON number where gojq
// succeeds. Every back end must give
// exactly gojq's outputs (only integers beyond 2^53 may be inexact, which
// are not tested here).
func TestKnownBugJQNumberLiterals(t *testing.T) {
	knownBug(t, "jqlua/luaapi: tostring and infinities differ from gojq on number literals", func(t testing.TB) {
		exprs := []string{`.spec.replicas | tostring`, `.spec | tostring`, `.spec.exp | tostring`, `1e1000`, `[.spec.half, -1e1000]`}
		lua := newLuaEvaluator(t, exprs)
		obj := progObj(t, `
	apiVersion: example.com/v1
	kind: Any
	metadata: {name: numbers, namespace: ns}
	spec: {replicas: 3.0, exp: 1e2, half: 0.5}
	`)
		ctx := context.Background()
		for _, e := range exprs {
			prog, err := compileJQ(e)
			require.NoError(t, err)
			want, wantErr := gojqEvaluator{}.all(ctx, prog, obj.Object)
			require.NoError(t, wantErr, e)
			got, gotErr := lua.all(ctx, prog, obj.Object)
			if assert.NoError(t, gotErr, "jq %s", e) {
				assert.Equal(t, fmt.Sprint(want), fmt.Sprint(got), "jq %s", e)
			}
		}
	})
}

// passThrough overrides the hooks with scripts that call the generated
// ones: the object then reaches them as real Lua tables, not
// as the lazy view the Go API passes. The results must not change.
const passThrough = `
function InterpretStatus(obj) return karta.generated.InterpretStatus(obj) end
function GetPodSpecs(obj) return karta.generated.GetPodSpecs(obj) end
function GetGangGroups(obj, pods) return karta.generated.GetGangGroups(obj, pods) end
`

func TestDifferentialTablesAndViews(t *testing.T) {
	ctx := context.Background()
	compared := 0
	for _, fx := range diffFixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			plain := progCompile(t, fx.k, Options{})
			tables := progCompile(t, fx.k, Options{Scripts: []Script{{Name: "pass.lua", Source: passThrough}}})
			for _, obj := range fx.objs {
				want, wantErr := plain.InterpretStatus(ctx, obj)
				got, gotErr := tables.InterpretStatus(ctx, obj)
				if fx.k.Spec.LuaScript == "" || wantErr != nil {
					// A luaScript override runs in both, the pass-through
					// after it; compare only generated results.
					if wantErr != nil {
						require.Error(t, gotErr, obj.GetName())
						assert.Equal(t, hookCause(t, plain, HookInterpretStatus, wantErr), hookCause(t, tables, HookInterpretStatus, gotErr))
					} else if assert.NoError(t, gotErr, obj.GetName()) {
						assert.Equal(t, want, got, "InterpretStatus %s", obj.GetName())
						compared++
					}
				}

				wantSpecs, wantErr := plain.GetPodSpecs(ctx, obj)
				gotSpecs, gotErr := tables.GetPodSpecs(ctx, obj)
				if wantErr != nil {
					require.Error(t, gotErr, obj.GetName())
					assert.Contains(t, gotErr.Error(), hookCause(t, plain, HookGetPodSpecs, wantErr))
				} else if assert.NoError(t, gotErr, obj.GetName()) {
					// Null members are lost on the way through tables: see
					// TestKnownBugTablesKeepInputJSON.
					assert.Equal(t, dropNullMembers(normalJSON(t, []any{wantSpecs})), dropNullMembers(normalJSON(t, []any{gotSpecs})), "GetPodSpecs %s", obj.GetName())
					compared++
				}

				wantGang, wantErr := plain.GetGangGroups(ctx, obj, fx.pods)
				gotGang, gotErr := tables.GetGangGroups(ctx, obj, fx.pods)
				if wantErr != nil {
					require.Error(t, gotErr, obj.GetName())
				} else if assert.NoError(t, gotErr, obj.GetName()) {
					assert.Equal(t, wantGang, gotGang, "GetGangGroups %s", obj.GetName())
					compared++
				}
			}
		})
	}
	assert.Greater(t, compared, 50)
}

// dropNullMembers removes the null members of every object in v.
func dropNullMembers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if e != nil {
				out[k] = dropNullMembers(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = dropNullMembers(e)
		}
		return out
	}
	return v
}

// TestKnownBugTablesKeepInputJSON: KNOWN BUG in luaapi's value bridge (not
// owned here). An input table returned structurally unchanged must be
// emitted as the input's original JSON, so that a generated hook reading a
// view or real tables makes no observable difference. Today a table built
// by ToLuaTable carries no link to its Go value, so a template a script
// hands back unchanged loses its null members (creationTimestamp: null)
// and its number spellings (1.28e8 becomes 128000000). Once luaapi returns
// the original values, decode.go must also keep number literals
// (json.Decoder.UseNumber in decodeJSONValue) for this test to pass.
func TestKnownBugTablesKeepInputJSON(t *testing.T) {
	ctx := context.Background()
	for _, f := range []string{"knative-service", "deployment"} {
		t.Run(f, func(t *testing.T) {
			knownBug(t, "luaapi: input tables returned unchanged are not emitted as the input's original JSON", func(t testing.TB) {
				k := progKartaFile(t, filepath.Join(progProgramDir, f+".karta.yaml"))
				plain := progCompile(t, k, Options{})
				tables := progCompile(t, k, Options{Scripts: []Script{{Name: "pass.lua", Source: passThrough}}})
				obj := progObjFile(t, filepath.Join(progProgramDir, f+".yaml"))[0]
				want, err := plain.GetPodSpecs(ctx, obj)
				require.NoError(t, err)
				got, err := tables.GetPodSpecs(ctx, obj)
				require.NoError(t, err)
				assert.Equal(t, want.Items[0].PodTemplateSpec, got.Items[0].PodTemplateSpec)
			})
		})
	}
}
