package interpreter

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kartalua/karta/internal/third_party/gojq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/internal/exampledir"
	"github.com/kartalua/karta/internal/jqdirect"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/luaapi"
)

// Direct evaluation must never be observable (direct.go): where it gives a
// result, gojq gives the same one; where gojq fails, it declines; and the
// hooks give what the exact path (every expression on gojq) gives, on the built-ins' examples and on
// objects broken on purpose.

// directKind is a built-in with the example states it ships.
type directKind struct {
	name    string
	states  []*unstructured.Unstructured
	running *unstructured.Unstructured // running.yaml, the state pods.yaml goes with
	pods    []*unstructured.Unstructured
}

func directKinds(t testing.TB) []directKind {
	t.Helper()
	var out []directKind
	for _, name := range builtinNames(t) {
		out = append(out, directKindOf(t, name))
	}
	return out
}

// builtinNames are the built-ins' names (builtin/kartas/NAME.yaml).
func builtinNames(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "builtin", "kartas", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = strings.TrimSuffix(filepath.Base(f), ".yaml")
	}
	return names
}

// directKindOf is the built-in name with its examples.
func directKindOf(t testing.TB, name string) directKind {
	t.Helper()
	dir := filepath.Join("..", "examples", name)
	ex, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	sort.Strings(ex)
	dk := directKind{name: name}
	for _, e := range ex {
		switch {
		case filepath.Base(e) == "pods.yaml":
			dk.pods = progObjFile(t, e)
		case !exampledir.IsState(filepath.Base(e)):
		default:
			objs := progObjFile(t, e)
			dk.states = append(dk.states, objs...)
			if filepath.Base(e) == "running.yaml" {
				dk.running = objs[0]
			}
		}
	}
	require.NotEmpty(t, dk.states, dir)
	return dk
}

// k8sForm is obj as client-go hands it over: int64 and float64 numbers.
func k8sForm(t *testing.T, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	b, err := json.Marshal(obj.Object)
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON(b))
	return u
}

// brokenVariants are obj with parts of the wrong type, so that direct
// evaluation declines (or, through `?` and `//`, does not) and both paths
// must still agree.
func brokenVariants(t *testing.T, obj *unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, set := range []struct {
		path []string
		v    any
	}{
		{[]string{"status", "conditions"}, "not a list"},
		{[]string{"status", "conditions"}, []any{"not an object", map[string]any{"type": int64(3)}}},
		{[]string{"status"}, []any{int64(1), int64(2)}},
		{[]string{"status", "replicatedJobsStatus"}, map[string]any{"x": map[string]any{"ready": "3"}}},
		{[]string{"spec"}, "flat"},
		{[]string{"spec", "replicas"}, "two"},
		{[]string{"metadata", "labels"}, []any{}},
	} {
		c := obj.DeepCopy()
		require.NoError(t, unstructured.SetNestedField(c.Object, set.v, set.path...))
		out = append(out, c)
	}
	return out
}

func TestDirectHooksAgreeWithGojq(t *testing.T) {
	ctx := context.Background()
	directStatus := map[string]int{}
	for _, dk := range directKinds(t) {
		t.Run(dk.name, func(t *testing.T) {
			k := progKartaFile(t, filepath.Join("..", "builtin", "kartas", dk.name+".yaml"))
			// No wall-clock limit: under -race on a loaded machine the Lua
			// path of a large kind (Milvus' PlacePods) can pass the default
			// second, and a timeout is not a disagreement.
			noClock := Options{Limits: Limits{Timeout: -1}}
			fast := progCompile(t, k, noClock)
			exact := progCompile(t, k, noClock)
			exact.noDirect = true
			var objs []*unstructured.Unstructured
			for _, s := range dk.states {
				objs = append(objs, s, k8sForm(t, s))
				objs = append(objs, brokenVariants(t, s)...)
			}
			pods := dk.pods
			for _, p := range dk.pods {
				pods = append(pods, k8sForm(t, p))
			}
			for i, obj := range objs {
				got, gotErr := fast.InterpretStatus(ctx, obj)
				want, wantErr := exact.InterpretStatus(ctx, obj)
				assertSameResult(t, want, wantErr, got, gotErr, "%s object %d: InterpretStatus", dk.name, i)
				if fast.status != nil {
					if _, ok := statusOnDirect(ctx, fast, obj.Object); ok {
						directStatus[dk.name]++
					}
				}
				gotSpecs, gotErr := fast.GetPodSpecs(ctx, obj)
				wantSpecs, wantErr := exact.GetPodSpecs(ctx, obj)
				if hasViews(k) {
					// A view builds objects: where its operands are the
					// object's own values, the direct path keeps them as
					// they are, and the exact path's gojq for
					// object + object hands back its own ints. The JSON
					// is the same, number spelling aside.
					wantSpecs, gotSpecs = viaJSON[*PodSpecs](t, wantSpecs), viaJSON[*PodSpecs](t, gotSpecs)
				}
				assertSameResult(t, wantSpecs, wantErr, gotSpecs, gotErr, "%s object %d: GetPodSpecs", dk.name, i)
				if len(pods) == 0 {
					continue
				}
				gotGang, gotErr := fast.GetGangGroups(ctx, obj, pods)
				wantGang, wantErr := exact.GetGangGroups(ctx, obj, pods)
				assertSameResult(t, wantGang, wantErr, gotGang, gotErr, "%s object %d: GetGangGroups", dk.name, i)
				gotPlaced, gotErr := fast.PlacePods(ctx, obj, pods)
				wantPlaced, wantErr := exact.PlacePods(ctx, obj, pods)
				assertSameResult(t, wantPlaced, wantErr, gotPlaced, gotErr, "%s object %d: PlacePods", dk.name, i)
				for j, pod := range pods {
					got, gotErr := fast.PlacePod(ctx, obj, pod)
					want, wantErr := exact.PlacePod(ctx, obj, pod)
					assertSameResult(t, want, wantErr, got, gotErr, "%s object %d pod %d: PlacePod", dk.name, i, j)
				}
			}
		})
	}
	// The direct path is taken for every built-in, on every example state
	// and its client-go form (at least).
	for _, dk := range directKinds(t) {
		assert.GreaterOrEqual(t, directStatus[dk.name], 2*len(dk.states), "InterpretStatus of %s runs directly", dk.name)
	}
}

// hasViews reports whether some component of k has a specDefinition view.
func hasViews(k *karta.Karta) bool {
	for _, c := range k.Spec.StructureDefinition.Components() {
		if c.SpecDefinition != nil && c.SpecDefinition.View != nil {
			return true
		}
	}
	return false
}

func assertSameResult(t *testing.T, want any, wantErr error, got any, gotErr error, msgAndArgs ...any) {
	t.Helper()
	if wantErr != nil {
		if assert.Error(t, gotErr, msgAndArgs...) {
			assert.Equal(t, wantErr.Error(), gotErr.Error(), msgAndArgs...)
		}
		return
	}
	if assert.NoError(t, gotErr, msgAndArgs...) {
		assert.Equal(t, want, got, msgAndArgs...)
	}
}

// TestDirectPathsOfEveryBuiltin: every path of every built-in compiles
// for direct evaluation (a new built-in cannot fall off the fast path
// unnoticed), and its hooks run without a Lua state on its examples.
func TestDirectPathsOfEveryBuiltin(t *testing.T) {
	ctx := context.Background()
	for _, dk := range directKinds(t) {
		t.Run(dk.name, func(t *testing.T) {
			// A reference ($name) is read directly, and so is what an
			// `as`, a reduce or a def binds (TrainJob's pod template).
			k := progKartaFile(t, filepath.Join("..", "builtin", "kartas", dk.name+".yaml"))
			for _, ref := range collectPaths(k) {
				q, err := gojq.Parse(ref.expr)
				require.NoError(t, err)
				assert.NotNil(t, jqdirect.Compile(q, k.Spec.Variables()...), "%s: %s", ref.field, ref.expr)
			}
			p := progCompile(t, k, Options{})
			require.NotNil(t, p.status)
			for _, obj := range dk.states {
				_, ok := statusOnDirect(ctx, p, obj.Object)
				assert.True(t, ok, "InterpretStatus of %s", obj.GetName())
				_, ok = directOnly(ctx, p, func(ev evaluator) (*PodSpecs, error) { return p.podSpecs(ctx, ev, obj.Object) })
				assert.True(t, ok, "GetPodSpecs of %s", obj.GetName())
			}
			running := dk.running
			require.NotNil(t, running)
			for _, pod := range dk.pods {
				_, ok := directOnly(ctx, p, func(ev evaluator) (*PodPlacement, error) {
					pl, _, err := p.gang.placeOne(ctx, ev, running.Object, pod.Object)
					return pl, err
				})
				assert.True(t, ok, "PlacePod of %s", pod.GetName())
			}
		})
	}
}

// TestDirectDeclinesOnClosedAndCancelled: a cancelled call ends with the
// deadline's limit, as a Lua call does.
func TestDirectDeclinesOnClosedAndCancelled(t *testing.T) {
	k := progKartaFile(t, filepath.Join("..", "builtin", "kartas", "pytorchjob.yaml"))
	p := progCompile(t, k, Options{})
	obj := progObjFile(t, filepath.Join("..", "examples", "pytorchjob", "running.yaml"))[0]
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, ok := statusOnDirect(ctx, p, obj.Object)
	assert.False(t, ok)
	_, ok = directOnly(ctx, p, func(ev evaluator) (*PodSpecs, error) { return p.podSpecs(ctx, ev, obj.Object) })
	assert.False(t, ok)
	for _, err := range []error{
		func() error { _, err := p.InterpretStatus(ctx, obj); return err }(),
		func() error { _, err := p.GetPodSpecs(ctx, obj); return err }(),
	} {
		var le *luaapi.LimitError
		require.ErrorAs(t, err, &le)
		assert.Equal(t, luaapi.KindDeadline, le.Kind)
		assert.ErrorIs(t, err, context.Canceled)
	}
}

// TestDirectWorkIsBounded: an expression whose work explodes on a hostile
// object declines in direct evaluation (package jqdirect), and the Lua
// path then ends the call with its instruction limit, as it does without
// direct evaluation.
func TestDirectWorkIsBounded(t *testing.T) {
	xs := make([]any, 3000)
	for i := range xs {
		xs[i] = int64(i)
	}
	k := progKartaFile(t, filepath.Join("..", "builtin", "kartas", "pytorchjob.yaml")).DeepCopy()
	k.Spec.StructureDefinition.RootComponent.StatusDefinition.StatusMappings.Initializing[0].ByExpression.Expression = `[(.status.x[]) + (.status.x[])] | length`
	limits := Limits{MaxInstructions: 100_000, Timeout: time.Minute}
	fast := progCompile(t, k, Options{Limits: limits})
	exact := progCompile(t, k, Options{Limits: limits})
	exact.noDirect = true
	obj := progObjFile(t, filepath.Join("..", "examples", "pytorchjob", "created.yaml"))[0].DeepCopy()
	require.NoError(t, unstructured.SetNestedSlice(obj.Object, xs, "status", "x"))
	_, ok := statusOnDirect(context.Background(), fast, obj.Object)
	require.False(t, ok, "the direct path declines")
	_, gotErr := fast.InterpretStatus(context.Background(), obj)
	_, wantErr := exact.InterpretStatus(context.Background(), obj)
	var le *luaapi.LimitError
	require.ErrorAs(t, wantErr, &le)
	assert.Equal(t, luaapi.KindInstructions, le.Kind)
	require.Error(t, gotErr)
	assert.Equal(t, wantErr.Error(), gotErr.Error())
}

// TestDirectDeadline: a call that runs past the Program's timeout on the
// direct back end ends with the deadline's *luaapi.LimitError, as a Lua
// call past it does, and every evaluation after it fails with it.
func TestDirectDeadline(t *testing.T) {
	q, err := gojq.Parse(`.a`)
	require.NoError(t, err)
	prog := &jqProgram{expr: ".a", direct: jqdirect.Compile(q)}
	obj := map[string]any{"a": "x"}
	for _, tc := range []struct {
		timeout time.Duration
		ok      bool
	}{{time.Hour, true}, {time.Millisecond, false}} {
		p := &Program{limits: Limits{Timeout: tc.timeout}.WithDefaults()}
		ev := p.newEvaluator(context.Background(), nil)
		var gotErr error
		for range 4 * clockEvery {
			if _, gotErr = ev.all(context.Background(), prog, obj); gotErr != nil {
				break
			}
			time.Sleep(100 * time.Microsecond)
		}
		err := ev.finish(nil)
		if tc.ok {
			assert.NoError(t, gotErr)
			assert.NoError(t, err)
			continue
		}
		var le *luaapi.LimitError
		if assert.ErrorAs(t, gotErr, &le, "timeout %v", tc.timeout) {
			assert.Equal(t, luaapi.KindDeadline, le.Kind)
			assert.ErrorIs(t, le, context.DeadlineExceeded)
		}
		assert.Equal(t, gotErr, err, "the call ends with the limit")
	}
}
