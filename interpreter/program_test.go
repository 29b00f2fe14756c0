package interpreter

import (
	"context"
	"errors"
	"fmt"
	"github.com/kartalua/karta/internal/jqexpr"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/luaapi"
	"github.com/kartalua/karta/object"
)

// Helpers shared by the Program tests (program_*_test.go,
// codegen_golden_test.go, differential_test.go). They go through the public
// surface a caller uses: karta.Load (which applies the CRD defaults),
// validation with this package's Lua checks, Compile, and objects decoded
// as the CLI decodes them (numbers as json.Number, key order kept).

// progKarta loads the one Karta of a YAML text and requires that it
// validates without errors.
func progKarta(t testing.TB, text string) *karta.Karta {
	t.Helper()
	ks, err := karta.Load([]byte(text), "test.karta.yaml")
	require.NoError(t, err)
	require.Len(t, ks, 1)
	errs := karta.ValidateWithOptions(ks[0], ValidateOptions()).Errors()
	require.Empty(t, errs, "the Karta %q must be valid", ks[0].Name)
	return ks[0]
}

// progKartaFile is progKarta on a file.
func progKartaFile(t testing.TB, path string) *karta.Karta {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return progKarta(t, string(data))
}

// progCompile compiles k.
func progCompile(t testing.TB, k *karta.Karta, opts Options) *Program {
	t.Helper()
	p, err := Compile(k, opts)
	require.NoError(t, err)
	return p
}

// progFrom loads, validates and compiles the one Karta of a YAML text.
func progFrom(t testing.TB, text string, opts ...Options) *Program {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	return progCompile(t, progKarta(t, text), o)
}

// progObjects decodes every object of a YAML text (Lists expanded).
func progObjects(t testing.TB, text string) []*unstructured.Unstructured {
	t.Helper()
	docs, err := object.Decode([]byte(text), "test.yaml")
	require.NoError(t, err)
	var out []*unstructured.Unstructured
	for _, o := range object.Items(docs) {
		out = append(out, &unstructured.Unstructured{Object: o})
	}
	return out
}

// progObj decodes the one object of a YAML text.
func progObj(t testing.TB, text string) *unstructured.Unstructured {
	t.Helper()
	objs := progObjects(t, text)
	require.Len(t, objs, 1)
	return objs[0]
}

// progObjFile decodes the objects of a file.
func progObjFile(t testing.TB, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return progObjects(t, string(data))
}

// knownBug runs body, a test that shows a known bug, as an expected
// failure: the test passes while body fails (its failures are logged), and
// fails, naming the bug, once body passes — so that whoever fixes the bug
// turns it into a plain test. Nothing is skipped.
func knownBug(t *testing.T, what string, body func(t testing.TB)) {
	t.Helper()
	r := &bugRecorder{T: t}
	func() {
		defer func() {
			if p := recover(); p != nil && p != errBugFailNow {
				panic(p)
			}
		}()
		body(r)
	}()
	if !r.failed {
		t.Errorf("known bug fixed: %s — make this a plain test", what)
		return
	}
	t.Logf("known bug, still present: %s\n%s", what, strings.Join(r.msgs, "\n"))
}

// errBugFailNow unwinds a known-bug body at its first fatal failure.
var errBugFailNow = errors.New("known bug: fail now")

// bugRecorder is the testing.TB a known-bug body runs on: it records
// failures instead of failing the test.
type bugRecorder struct {
	*testing.T
	failed bool
	msgs   []string
}

func (r *bugRecorder) Errorf(format string, args ...any) {
	r.failed = true
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}
func (r *bugRecorder) Error(args ...any)                 { r.Errorf("%s", fmt.Sprint(args...)) }
func (r *bugRecorder) Fail()                             { r.failed = true }
func (r *bugRecorder) Failed() bool                      { return r.failed }
func (r *bugRecorder) FailNow()                          { r.failed = true; panic(errBugFailNow) }
func (r *bugRecorder) Fatal(args ...any)                 { r.Error(args...); r.FailNow() }
func (r *bugRecorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); r.FailNow() }

// progProgramDir is where this file's own fixtures live.
var progProgramDir = filepath.Join("testdata", "program")

// examplePyTorchJob is the Karta shipped in examples/kartas.
var examplePyTorchJob = filepath.Join("..", "examples", "kartas", "pytorchjob.yaml")

func TestCompileRefusesInvalidAndNil(t *testing.T) {
	_, err := Compile(nil, Options{})
	require.Error(t, err)

	// A matcher without criteria is a validation error; Compile
	// refuses it with every problem, naming the Karta.
	ks, err := karta.Load([]byte(`
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: broken}
spec:
  structureDefinition:
    rootComponent:
      name: root
      kind: {group: example.com, version: v1, kind: Thing}
      statusDefinition:
        statusMappings:
          running: [{}]
          failed: [{byPhase: Failed}]
`), "broken.yaml")
	require.NoError(t, err)
	_, err = Compile(ks[0], Options{})
	var ve *karta.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "broken", ve.Karta)
	assert.Len(t, ve.Problems, 2, "both problems are reported: %v", err)
	assert.Contains(t, err.Error(), `karta "broken"`)
}

func TestProgramAccessors(t *testing.T) {
	k := progKartaFile(t, examplePyTorchJob)
	p := progCompile(t, k, Options{PoolSize: 3})
	assert.Equal(t, "pytorchjob", p.Name())
	assert.Equal(t, schema.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "PyTorchJob"}, p.GVK())
	assert.Same(t, k, p.Karta())
	for _, h := range []Hook{HookGetPodSpecs, HookInterpretStatus, HookReviseSpec, HookGetGangGroups, HookSuspend, HookResume} {
		assert.True(t, p.HookEnabled(h), "%s is generated", h)
		assert.False(t, p.Overridden(h), "%s is not overridden", h)
	}
	assert.False(t, p.HookEnabled(HookRetain), "Retain is never generated")
	st := p.PoolStats()
	assert.Equal(t, 3, st.Size)
	assert.EqualValues(t, 0, st.Created, "no state is built up front: the Lua side is built on first need")
}

// TestProgramEndToEnd runs every hook of the example PyTorchJob Karta on a
// realistic object and its pods.
func TestProgramEndToEnd(t *testing.T) {
	p := progCompile(t, progKartaFile(t, examplePyTorchJob), Options{})
	obj := progObjFile(t, filepath.Join("testdata", "gang", "pytorchjob.yaml"))[0]
	pods := progObjFile(t, filepath.Join("testdata", "gang", "pytorchjob.pods.yaml"))
	ctx := context.Background()

	specs, err := p.GetPodSpecs(ctx, obj)
	require.NoError(t, err)
	require.Len(t, specs.Items, 2)
	assert.Equal(t, "master", specs.Items[0].Component)
	assert.Equal(t, "worker", specs.Items[1].Component)
	assert.Equal(t, int64(1), *specs.Items[0].Scale.Replicas)
	assert.Equal(t, int64(3), *specs.Items[1].Scale.Replicas)
	assert.Nil(t, specs.Items[1].Scale.MinReplicas)

	st, err := p.InterpretStatus(ctx, obj)
	require.NoError(t, err)
	assert.Equal(t, karta.StatusRunning, st.Status)
	assert.Equal(t, []karta.Status{karta.StatusRunning}, st.Matched)
	assert.Nil(t, st.Phase)
	require.Len(t, st.Conditions, 2)
	assert.Equal(t, "PyTorchJobRunning", *st.Conditions[1].Reason)

	gang, err := p.GetGangGroups(ctx, obj, pods)
	require.NoError(t, err)
	require.Len(t, gang.Groups, 1)
	assert.Equal(t, "pg-u-job-train", gang.Groups[0].Name)
	assert.EqualValues(t, 4, gang.Groups[0].MinMember)
	assert.Equal(t, []string{"ml/train-master-0", "ml/train-worker-0", "ml/train-worker-1", "ml/train-worker-2"}, gang.Groups[0].Pods)
	assert.Len(t, gang.Placements, 4)
	assert.Empty(t, gang.Unmatched)

	pl, err := p.PlacePod(ctx, obj, pods[1])
	require.NoError(t, err)
	assert.Equal(t, "master", pl.Component)

	stray := progObj(t, `
apiVersion: v1
kind: Pod
metadata: {name: stray, namespace: ml, labels: {app: other}}
`)
	_, err = p.PlacePod(ctx, obj, stray)
	var um *UnmatchedError
	require.ErrorAs(t, err, &um)
	assert.Equal(t, "ml/stray", um.Pod)

	rev, err := p.ReviseSpec(ctx, obj, []Revision{{Component: "worker", Patch: map[string]any{
		"spec": map[string]any{"schedulerName": "kai-scheduler"},
	}}})
	require.NoError(t, err)
	assert.Equal(t, []PatchOp{{Op: "add", Path: "/spec/pytorchReplicaSpecs/Worker/template/spec/schedulerName", Value: "kai-scheduler"}}, rev.Patch)
	got, _, _ := unstructured.NestedString(rev.Object.Object, "spec", "pytorchReplicaSpecs", "Worker", "template", "spec", "schedulerName")
	assert.Equal(t, "kai-scheduler", got)

	sus, err := p.Suspend(ctx, obj)
	require.NoError(t, err)
	suspended, _, _ := unstructured.NestedBool(sus.Object.Object, "spec", "runPolicy", "suspend")
	assert.True(t, suspended)
	res, err := p.Resume(ctx, sus.Object)
	require.NoError(t, err)
	suspended, found, _ := unstructured.NestedBool(res.Object.Object, "spec", "runPolicy", "suspend")
	assert.True(t, found)
	assert.False(t, suspended)
}

func TestProgramCanceledContext(t *testing.T) {
	p := progCompile(t, progKartaFile(t, examplePyTorchJob), Options{})
	obj := progObjFile(t, filepath.Join("testdata", "gang", "pytorchjob.yaml"))[0]
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.GetPodSpecs(ctx, obj)
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled), "got %v", err)
	assert.True(t, strings.HasPrefix(err.Error(), `karta "pytorchjob": GetPodSpecs: `), err.Error())
}

// runaway is an InterpretStatus override that misbehaves only on objects
// labelled runaway=yes, so the next call, on another object, shows whether
// the pool recovered.
func runaway(body string) string {
	return `
function InterpretStatus(obj)
  if obj.metadata.labels and obj.metadata.labels.runaway == "yes" then
` + body + `
  end
  return karta.generated.InterpretStatus(obj)
end
`
}

func TestProgramLimits(t *testing.T) {
	good := progObj(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec: {replicas: 1, template: {spec: {containers: [{name: web, image: nginx:1.27}]}}}
status:
  conditions: [{type: Available, status: "True"}, {type: Progressing, status: "True", reason: NewReplicaSetAvailable}]
`)
	bad := good.DeepCopy()
	bad.SetLabels(map[string]string{"runaway": "yes"})
	for _, tc := range []struct {
		name   string
		body   string
		limits Limits
		kind   luaapi.LimitKind
		msg    string
	}{{
		name: "an endless loop hits the instruction limit",
		body: "    while true do end",
		// A generous deadline, so that a loaded machine cannot make the
		// deadline fire before the budget is spent.
		limits: Limits{Timeout: time.Minute},
		kind:   luaapi.KindInstructions, msg: "instruction limit 10000000 exceeded",
	}, {
		name:   "an endless loop hits the deadline without an instruction limit",
		body:   "    while true do end",
		limits: Limits{Timeout: 50 * time.Millisecond, MaxInstructions: -1},
		kind:   luaapi.KindDeadline, msg: "deadline 50ms exceeded",
	}, {
		name:   "a custom instruction budget",
		body:   "    local n = 0\n    for i = 1, 1e6 do n = n + i end",
		limits: Limits{MaxInstructions: 1000},
		kind:   luaapi.KindInstructions, msg: "instruction limit 1000 exceeded",
	}, {
		name:   "pcall cannot swallow a limit",
		body:   "    pcall(function() while true do end end)",
		limits: Limits{Timeout: time.Minute},
		kind:   luaapi.KindInstructions, msg: "instruction limit 10000000 exceeded",
	}, {
		name: "deep recursion hits the call depth limit",
		body: "    local function f(n) return f(n + 1) + 1 end\n    f(1)",
		kind: luaapi.KindCallDepth, msg: "call depth limit 200 exceeded",
	}, {
		name:   "a custom call depth",
		body:   "    local function f(n) if n == 0 then return 0 end return f(n - 1) + 1 end\n    f(60)",
		limits: Limits{CallDepth: 50},
		kind:   luaapi.KindCallDepth, msg: "call depth limit 50 exceeded",
	}, {
		name: "a huge string hits the string size limit",
		body: `    local s = string.rep("x", 2^28)`,
		kind: luaapi.KindStringSize, msg: "string size limit 1 MiB exceeded",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			k := progKartaFile(t, filepath.Join(progProgramDir, "deployment.karta.yaml")).DeepCopy()
			k.Spec.LuaScript = runaway(tc.body)
			p := progCompile(t, k, Options{Limits: tc.limits, PoolSize: 2})
			start := time.Now()
			_, err := p.InterpretStatus(context.Background(), bad)
			elapsed := time.Since(start)
			require.Error(t, err)
			var le *luaapi.LimitError
			require.True(t, errors.As(err, &le), "want a *luaapi.LimitError, got %T: %v", err, err)
			assert.Equal(t, tc.kind, le.Kind)
			assert.Equal(t, "deployment", le.Karta)
			assert.Equal(t, string(HookInterpretStatus), le.Hook)
			assert.Equal(t, `karta "deployment": InterpretStatus: `+tc.msg, err.Error())
			if tc.kind == luaapi.KindDeadline {
				assert.ErrorIs(t, err, context.DeadlineExceeded)
				assert.GreaterOrEqual(t, elapsed, 50*time.Millisecond)
			}
			// The message says which limit fired; the bound on elapsed time is
			// loose on purpose: these machines are shared and noisy.
			assert.Less(t, elapsed, 30*time.Second, "ends promptly")

			st := p.PoolStats()
			assert.EqualValues(t, 1, st.Discarded, "the state that hit the limit is discarded")
			assert.Equal(t, 0, st.InUse)
			res, err := p.InterpretStatus(context.Background(), good)
			require.NoError(t, err, "the pool stays healthy")
			assert.Equal(t, karta.StatusRunning, res.Status)
			specs, err := p.GetPodSpecs(context.Background(), bad)
			require.NoError(t, err, "hooks without the override are unaffected")
			assert.Len(t, specs.Items, 1)
			st = p.PoolStats()
			assert.EqualValues(t, 1, st.Discarded)
			assert.LessOrEqual(t, st.Created-st.Discarded, int64(st.Size))
		})
	}

	t.Run("the caller's deadline is a deadline limit too", func(t *testing.T) {
		k := progKartaFile(t, filepath.Join(progProgramDir, "deployment.karta.yaml")).DeepCopy()
		k.Spec.LuaScript = runaway("    while true do end")
		// The Program's own deadline is a minute: only the caller's 30ms
		// can end the call within the loose bound below.
		p := progCompile(t, k, Options{Limits: Limits{MaxInstructions: -1, Timeout: time.Minute}})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := p.InterpretStatus(ctx, bad)
		var le *luaapi.LimitError
		require.ErrorAs(t, err, &le)
		assert.Equal(t, luaapi.KindDeadline, le.Kind)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Less(t, time.Since(start), 30*time.Second, "the caller's deadline, not the Program's minute")
	})
}

// TestProgramLimitsMemory: hostile scripts end promptly with the limit
// that stops them: a huge table slot on the memory guard, doubling a
// string with .. on the string size limit.
func TestProgramLimitsMemory(t *testing.T) {
	good := progObjFile(t, filepath.Join(progProgramDir, "deployment.yaml"))[0]
	for _, tc := range []struct {
		body string
		kind luaapi.LimitKind
		msg  string
	}{
		{"  local t = {} t[60000000] = true", luaapi.KindMemory, `karta "deployment": InterpretStatus: memory limit 64 MiB exceeded`},
		{"  local s = 'x' for i = 1, 30 do s = s .. s end", luaapi.KindStringSize, `karta "deployment": InterpretStatus: string size limit 1 MiB exceeded`},
	} {
		t.Run(tc.body, func(t *testing.T) {
			k := progKartaFile(t, filepath.Join(progProgramDir, "deployment.karta.yaml")).DeepCopy()
			k.Spec.LuaScript = "function InterpretStatus(obj)\n" + tc.body + "\n  return karta.generated.InterpretStatus(obj)\nend\n"
			p := progCompile(t, k, Options{})
			start := time.Now()
			_, err := p.InterpretStatus(context.Background(), good)
			var le *luaapi.LimitError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tc.kind, le.Kind)
			assert.Equal(t, tc.msg, err.Error())
			assert.Less(t, time.Since(start), 5*time.Second)
		})
	}
}

// TestProgramLimitsQueueingIsNotCharged: the deadline runs from the start of a
// call's own run; waiting for the pool's only state does not count.
func TestProgramLimitsQueueingIsNotCharged(t *testing.T) {
	k := progKartaFile(t, filepath.Join(progProgramDir, "deployment.karta.yaml")).DeepCopy()
	k.Spec.LuaScript = `
function InterpretStatus(obj)
  local t0 = os.clock()
  while os.clock() - t0 < 0.15 do end
  return karta.generated.InterpretStatus(obj)
end
`
	// Each call runs 150ms on its own; queued one after another on a single
	// state they take 30×150ms, far beyond the 3s deadline, which only a
	// deadline charged for the wait would hit. 3s leaves a single call room
	// on a loaded machine.
	p := progCompile(t, k, Options{PoolSize: 1, Limits: Limits{Timeout: 3 * time.Second, MaxInstructions: -1}})
	obj := progObjFile(t, filepath.Join(progProgramDir, "deployment.yaml"))[0]
	const calls = 30
	errs := make(chan error, calls)
	start := time.Now()
	for range calls {
		go func() {
			_, err := p.InterpretStatus(context.Background(), obj)
			errs <- err
		}()
	}
	for range calls {
		assert.NoError(t, <-errs)
	}
	assert.GreaterOrEqual(t, time.Since(start), calls*150*time.Millisecond, "the calls ran one at a time")
	assert.EqualValues(t, 1, p.PoolStats().Created)
	assert.Zero(t, p.PoolStats().Discarded)
}

// compileJQ parses and compiles a jq text outside any Karta, for tests
// that compare evaluators on loose expressions.
func compileJQ(expr string) (*jqProgram, error) {
	a, errs := jqexpr.Check(expr)
	if a.Query == nil {
		return nil, errors.Join(errs...)
	}
	return compileAnalysis(a)
}

// mustCheck is k's checked form, whatever its validation problems: model
// tests build parts of Kartas that are not whole.
func mustCheck(t testing.TB, k *karta.Karta) *karta.Checked {
	t.Helper()
	c, _ := karta.Analyze(k, ValidateOptions())
	require.NotNil(t, c)
	return c
}

// TestCompileKeepsWarnings: Compile checks the Karta once and the Program
// carries the check's warnings (a path ReviseSpec cannot write through).
func TestCompileKeepsWarnings(t *testing.T) {
	p := progFrom(t, `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: warned}
spec:
  structureDefinition:
    rootComponent:
      name: warned
      kind: {group: example.com, version: v1, kind: Thing}
      specDefinition: {podTemplateSpecPath: '.spec.template // {}'}
      statusDefinition:
        statusMappings:
          running: [{byExpression: {expression: .status.ok, expectedResult: "true"}}]
`)
	require.Len(t, p.Warnings(), 1)
	assert.Contains(t, p.Warnings()[0].String(), "podTemplateSpecPath: warning: not assignable")
}

// A hook refused by the Go algorithm (here AppWrapper's revisions, whose
// computed template paths cannot be written) takes no Lua state when no
// script overrides it; an adapter's operation on a pooled state that its
// Go code refuses keeps its state: only a limit, a panic or a Lua error
// discards one. A caller repeating a refused request must not cost a new
// state per call.
func TestRefusedCallKeepsItsState(t *testing.T) {
	k := progKartaFile(t, filepath.Join("..", "builtin", "kartas", "appwrapper.yaml"))
	obj := progObjFile(t, filepath.Join("..", "examples", "appwrapper", "running.yaml"))[0]
	revs := exampleRevisions(t, "appwrapper")
	p := progCompile(t, k, Options{PoolSize: 1})
	refused := errors.New("refused")
	for range 5 {
		_, err := p.ReviseSpec(context.Background(), obj, revs)
		var pe *PathError
		require.ErrorAs(t, err, &pe)
		assert.NotEmpty(t, pe.Reason)
	}
	assert.Zero(t, p.PoolStats().Created, "run in Go")
	for range 5 {
		err := p.WithState(context.Background(), HookGetComponents, func(context.Context, *PooledState) error { return refused })
		require.ErrorIs(t, err, refused)
	}
	st := p.PoolStats()
	assert.EqualValues(t, 1, st.Created)
	assert.Zero(t, st.Discarded)
}
