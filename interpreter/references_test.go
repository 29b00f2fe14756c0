package interpreter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/luaapi"
)

// The references of refsKarta, in its order.
const (
	refsRuntimeRef = `  - name: runtime
    kind: {group: example.com, version: v1, kind: Runtime}
    scope: Cluster
    lookup: {name: .spec.runtimeRef}
`
	refsPodsRef = `  - name: pods
    kind: {version: v1, kind: Pod}
    list:
      labelSelector: '{matchLabels: {app: .metadata.name}}'
      owner: true
`
)

// refsKarta reads its pod template from a Runtime it looks up and its
// status from the Pods it owns and the Runtime.
const refsKarta = `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: refs-lab}
spec:
  references:
` + refsRuntimeRef + refsPodsRef + `  structureDefinition:
    rootComponent:
      name: workload
      kind: {group: example.com, version: v1, kind: Workload}
      specDefinition:
        podTemplateSpecPath: '$runtime.spec.template // .spec.template'
      scaleDefinition:
        replicasPath: '.spec.replicas'
      statusDefinition:
        statusMappings:
          failed:
          - byExpression: {expression: '$runtime == null and .spec.runtimeRef != null', expectedResult: "true"}
          running:
          - byExpression: {expression: '[$pods[] | select(.status.phase == "Running")] | length == 2', expectedResult: "true"}
          initializing:
          - byExpression: {expression: '$pods | length | . < 2', expectedResult: "true"}
`

func refsObject(t testing.TB, text string) *unstructured.Unstructured {
	t.Helper()
	return &unstructured.Unstructured{Object: objectFrom(t, text)}
}

func refsWorkload(t testing.TB, runtimeRef string) *unstructured.Unstructured {
	return refsObject(t, `
apiVersion: example.com/v1
kind: Workload
metadata: {name: w, namespace: ns, uid: u-1}
spec:
  replicas: 2
  runtimeRef: `+runtimeRef+`
  template: {spec: {containers: [{name: own, image: own}]}}
`)
}

func refsPod(t testing.TB, name, ns, app, owner, phase string) *unstructured.Unstructured {
	return refsObject(t, fmt.Sprintf(`
apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
  labels: {app: %s}
  ownerReferences: [{apiVersion: example.com/v1, kind: Workload, name: w, uid: %s, controller: true}]
status: {phase: %s}
`, name, ns, app, owner, phase))
}

func refsRuntime(t testing.TB) *unstructured.Unstructured {
	return refsObject(t, `
apiVersion: example.com/v1
kind: Runtime
metadata: {name: torch}
spec:
  template: {spec: {containers: [{name: trainer, image: torch:2}]}}
`)
}

// refsPrograms are the Karta compiled twice: as callers get it, and with
// the direct evaluator off (every expression on its gojq program).
func refsPrograms(t *testing.T) map[string]*Program {
	t.Helper()
	k := progKarta(t, refsKarta)
	def, err := Compile(k, Options{})
	require.NoError(t, err)
	exact, err := Compile(k, Options{})
	require.NoError(t, err)
	exact.noDirect = true
	return map[string]*Program{"default": def, "exact": exact}
}

type warnings []ReferenceWarning

func (w *warnings) add(x ReferenceWarning) { *w = append(*w, x) }

func (w warnings) messages() []string {
	var out []string
	for _, x := range w {
		out = append(out, x.Reference+": "+x.Message)
	}
	return out
}

func TestReferencesBackendsAgree(t *testing.T) {
	cases := []struct {
		name       string
		runtimeRef string
		objs       func(t testing.TB) []*unstructured.Unstructured
		noResolver bool
		status     karta.Status
		image      string
		warnings   []string
	}{
		{
			name: "both resolved", runtimeRef: "torch",
			objs: func(t testing.TB) []*unstructured.Unstructured {
				return []*unstructured.Unstructured{refsRuntime(t),
					refsPod(t, "w-0", "ns", "w", "u-1", "Running"), refsPod(t, "w-1", "ns", "w", "u-1", "Running"),
					// not the workload's: another namespace, label, owner
					refsPod(t, "x-0", "other", "w", "u-1", "Running"), refsPod(t, "x-1", "ns", "x", "u-1", "Running"),
					refsPod(t, "x-2", "ns", "w", "u-2", "Running")}
			},
			status: karta.StatusRunning, image: "torch:2",
		},
		{
			name: "a pending pod", runtimeRef: "torch",
			objs: func(t testing.TB) []*unstructured.Unstructured {
				return []*unstructured.Unstructured{refsRuntime(t),
					refsPod(t, "w-0", "ns", "w", "u-1", "Running"), refsPod(t, "w-1", "ns", "w", "u-1", "Pending")}
			},
			status: karta.StatusUndefined, image: "torch:2",
		},
		{
			name: "the runtime is missing: null, the list empty", runtimeRef: "gone",
			objs:   func(t testing.TB) []*unstructured.Unstructured { return nil },
			status: karta.StatusFailed, image: "own",
			warnings: []string{"runtime: Runtime gone not found: null"},
		},
		{
			name: "no runtimeRef: no lookup", runtimeRef: "null",
			objs:   func(t testing.TB) []*unstructured.Unstructured { return nil },
			status: karta.StatusInitializing, image: "own",
		},
		{
			name: "no resolver: absent, with warnings", runtimeRef: "torch", noResolver: true,
			objs:   func(t testing.TB) []*unstructured.Unstructured { return nil },
			status: karta.StatusFailed, image: "own",
			warnings: []string{"runtime: no resolver: absent", "pods: no resolver: absent"},
		},
	}
	progs := refsPrograms(t)
	for _, tc := range cases {
		for backend, p := range progs {
			t.Run(tc.name+"/"+backend, func(t *testing.T) {
				var ws warnings
				ctx := context.Background()
				if !tc.noResolver {
					ctx = WithResolver(ctx, NewStaticResolver(tc.objs(t)...), ws.add)
				} else {
					ctx = WithResolver(ctx, nil, ws.add)
				}
				obj := refsWorkload(t, tc.runtimeRef)
				st, err := p.InterpretStatus(ctx, obj)
				require.NoError(t, err)
				assert.Equal(t, tc.status, st.Status)
				specs, err := p.GetPodSpecs(ctx, obj)
				require.NoError(t, err)
				require.Len(t, specs.Items, 1)
				containers := specs.Items[0].PodTemplateSpec["spec"].(map[string]any)["containers"].([]any)
				assert.Equal(t, tc.image, containers[0].(map[string]any)["image"])
				want := tc.warnings
				if want != nil { // once per hook call
					want = append(append([]string{}, want...), want...)
				}
				assert.Equal(t, want, ws.messages())
			})
		}
	}
}

// An adapter's own entry into a pooled state (Karmada's in-process
// operations) binds nothing: the references are absent, each in its
// shape, on the evaluator a script's karta.generated runs on and on gojq
// alike.
func TestReferencesUnboundOutsideHooks(t *testing.T) {
	p := refsPrograms(t)["exact"]
	obj := refsWorkload(t, "torch")
	for expr, want := range map[string]any{
		// [] iterates to nothing; null would be an error
		`[$pods[] | select(.status.phase == "Running")] | length == 2`: false,
		`$runtime == null and .spec.runtimeRef != null`:                true,
	} {
		prog, err := p.model.exprs.compile(expr)
		require.NoError(t, err)
		_, err = p.inScriptCall(context.Background(), HookInterpretStatus, func(ctx context.Context, ev evaluator) (any, error) {
			inScript, err := ev.all(ctx, prog, obj.Object)
			require.NoError(t, err)
			gojq, err := gojqEvaluator{}.all(ctx, prog, obj.Object)
			require.NoError(t, err)
			assert.Equal(t, []any{want}, inScript, expr)
			assert.Equal(t, []any{want}, gojq, expr)
			return nil, nil
		})
		require.NoError(t, err)
	}
}

func TestReferencesWithoutResolverInContext(t *testing.T) {
	p := refsPrograms(t)["default"]
	st, err := p.InterpretStatus(context.Background(), refsWorkload(t, "torch"))
	require.NoError(t, err)
	assert.Equal(t, karta.StatusFailed, st.Status, "an unresolved lookup is null")
}

// failingResolver fails every query: a forbidden kind, say.
type failingResolver struct{}

func (failingResolver) Resolve(context.Context, ReferenceQuery, *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return nil, errors.New(`pods is forbidden: User "karta" cannot list resource "pods"`)
}

func TestReferencesResolverErrorIsAbsence(t *testing.T) {
	var ws warnings
	ctx := WithResolver(context.Background(), failingResolver{}, ws.add)
	st, err := refsPrograms(t)["default"].InterpretStatus(ctx, refsWorkload(t, "torch"))
	require.NoError(t, err, "a resolver's error never breaks the hook")
	assert.Equal(t, karta.StatusFailed, st.Status)
	assert.Equal(t, []string{
		`runtime: absent: pods is forbidden: User "karta" cannot list resource "pods"`,
		`pods: absent: pods is forbidden: User "karta" cannot list resource "pods"`,
	}, ws.messages())
}

func TestReferencesBounds(t *testing.T) {
	t.Run("a list is cut at MaxReferencedObjects", func(t *testing.T) {
		objs := []*unstructured.Unstructured{refsRuntime(t)}
		for i := range MaxReferencedObjects + 10 {
			objs = append(objs, refsPod(t, fmt.Sprintf("w-%03d", i), "ns", "w", "u-1", "Pending"))
		}
		var ws warnings
		ctx := WithResolver(context.Background(), NewStaticResolver(objs...), ws.add)
		k := progKarta(t, strings.Replace(refsKarta, `'$pods | length | . < 2'`, `'$pods | length | . == 255'`, 1))
		p, err := Compile(k, Options{})
		require.NoError(t, err)
		st, err := p.InterpretStatus(ctx, refsWorkload(t, "torch"))
		require.NoError(t, err)
		// The runtime took one of the 256: the list holds 255.
		assert.Equal(t, karta.StatusInitializing, st.Status)
		assert.Equal(t, []string{"pods: 266 objects, cut to 255 (at most 256 in all per call)"}, ws.messages())
	})
	t.Run("a lookup after the list spent every object is null", func(t *testing.T) {
		text := strings.Replace(refsKarta, refsRuntimeRef+refsPodsRef, refsPodsRef+refsRuntimeRef, 1)
		objs := []*unstructured.Unstructured{refsRuntime(t)}
		for i := range MaxReferencedObjects {
			objs = append(objs, refsPod(t, fmt.Sprintf("w-%03d", i), "ns", "w", "u-1", "Pending"))
		}
		var ws warnings
		ctx := WithResolver(context.Background(), NewStaticResolver(objs...), ws.add)
		p, err := Compile(progKarta(t, text), Options{})
		require.NoError(t, err)
		st, err := p.InterpretStatus(ctx, refsWorkload(t, "torch"))
		require.NoError(t, err)
		assert.Equal(t, karta.StatusFailed, st.Status, "$runtime is null")
		assert.Equal(t, []string{"runtime: 1 objects, cut to 0 (at most 256 in all per call)"}, ws.messages())
	})
	t.Run("referenced bytes count against the memory limit", func(t *testing.T) {
		k := progKarta(t, refsKarta)
		p, err := Compile(k, Options{Limits: Limits{MaxMemory: 4 << 10}})
		require.NoError(t, err)
		big := refsRuntime(t)
		big.Object["data"] = strings.Repeat("x", 8<<10)
		ctx := WithResolver(context.Background(), NewStaticResolver(big), nil)
		_, err = p.InterpretStatus(ctx, refsWorkload(t, "torch"))
		var le *luaapi.LimitError
		require.ErrorAs(t, err, &le)
		assert.Equal(t, luaapi.KindReferencedBytes, le.Kind)
		assert.Equal(t, `karta "refs-lab": InterpretStatus: referenced bytes limit 4096 bytes exceeded`, err.Error())
	})
}

func TestReferencesHostileSelector(t *testing.T) {
	for _, sel := range []string{`"app=w"`, `{matchLabels: {app: 1}}`, `{matchExpressions: [{key: "a", operator: "Nope"}]}`, `{extra: 1}`} {
		t.Run(sel, func(t *testing.T) {
			text := strings.Replace(refsKarta, `'{matchLabels: {app: .metadata.name}}'`, "'"+sel+"'", 1)
			p, err := Compile(progKarta(t, text), Options{})
			require.NoError(t, err)
			var ws warnings
			ctx := WithResolver(context.Background(), NewStaticResolver(refsRuntime(t), refsPod(t, "w-0", "ns", "w", "u-1", "Running")), ws.add)
			st, err := p.InterpretStatus(ctx, refsWorkload(t, "torch"))
			require.NoError(t, err)
			assert.Equal(t, karta.StatusInitializing, st.Status, "a broken selector selects nothing")
			require.Len(t, ws, 1)
			assert.Contains(t, ws[0].Message, "list.labelSelector")
		})
	}
}

// A script's jq(expr, obj) reads the references as the Karta's own
// expressions do, within the hook's call: the values the hook entered with
// (jqvars), whatever the value it is given; absent without a resolver.
func TestReferencesInScriptJQ(t *testing.T) {
	const script = `
function InterpretStatus(obj)
  local img = jq("$runtime.spec.template.spec.containers[0].image // \"none\"", obj)[1]
  local running = jq("[$pods[] | select(.status.phase == \"Running\")] | length", {})[1]
  return {status = "Running", matched = {"Running"}, phase = img .. "/" .. running, conditions = {}}
end
`
	p, err := Compile(progKarta(t, refsKarta), Options{Scripts: []Script{{Name: "status.lua", Source: script}}})
	require.NoError(t, err)
	obj := refsWorkload(t, "torch")
	res := NewStaticResolver(refsRuntime(t),
		refsPod(t, "a", "ns", "w", "u-1", "Running"), refsPod(t, "b", "ns", "w", "u-1", "Pending"))
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"resolved", WithResolver(context.Background(), res, nil), "torch:2/1"},
		{"without a resolver", context.Background(), "none/0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := p.InterpretStatus(tc.ctx, obj)
			require.NoError(t, err)
			require.NotNil(t, st.Phase)
			assert.Equal(t, tc.want, *st.Phase)
		})
	}

	// An undeclared variable is jq's compile error, as in a Karta.
	bad := `function InterpretStatus(obj) return {status = "Running", matched = {"Running"}, phase = jq("$nope", obj)[1], conditions = {}} end`
	p, err = Compile(progKarta(t, refsKarta), Options{Scripts: []Script{{Name: "bad.lua", Source: bad}}})
	require.NoError(t, err)
	_, err = p.InterpretStatus(context.Background(), obj)
	require.ErrorContains(t, err, "variable not defined: $nope")
}

// TestReferencesQueryDirectAgreesWithGojq: a reference's expressions run
// on the direct back end first (refEvaluator); the query, its absence and
// its warnings are gojq's alone, for names, errors, non-strings and
// selectors.
func TestReferencesQueryDirectAgreesWithGojq(t *testing.T) {
	for _, tc := range []struct{ name, runtimeRef string }{
		{`.spec.runtimeRef`, `torch`},
		{`.spec.runtimeRef`, `null`},
		{`.spec.runtimeRef`, `7`},
		{`.spec.runtimeRef`, `""`},
		{`.spec.runtimeRef`, `{a: 1}`},
		{`.spec.runtimeRef | startswith("t") | if . then "torch" else null end`, `torch`},
		{`.spec.runtimeRef | startswith("t")`, `7`},
		{`.spec.runtimeRef[0]`, `torch`},
		{`select(.spec.runtimeRef == "torch") | .spec.runtimeRef + "-x"`, `torch`},
		{`.spec.runtimeRef[]`, `[a, b]`},
		{`.spec.runtimeRef | tostring`, `1.5`},
	} {
		t.Run(tc.name+" on "+tc.runtimeRef, func(t *testing.T) {
			text := strings.Replace(refsKarta, `{name: .spec.runtimeRef}`, `{name: '`+tc.name+`'}`, 1)
			direct, err := Compile(progKarta(t, text), Options{})
			require.NoError(t, err)
			gojqOnly, err := Compile(progKarta(t, text), Options{})
			require.NoError(t, err)
			for i := range gojqOnly.refs {
				for _, p := range []*jqProgram{gojqOnly.refs[i].name, gojqOnly.refs[i].ns, gojqOnly.refs[i].selector} {
					if p != nil {
						p.direct = nil
					}
				}
			}
			require.NotNil(t, direct.refs[0].name.direct, "the expression runs directly first")
			obj := refsWorkload(t, tc.runtimeRef)
			query := func(p *Program) (q []ReferenceQuery, oks []bool, ws warnings) {
				for i := range p.refs {
					b := refBinding{p: p, rv: resolverValue{warn: ws.add}, left: MaxReferencedObjects}
					x, ok := b.query(context.Background(), &p.refs[i], obj)
					q, oks = append(q, x), append(oks, ok)
				}
				return q, oks, ws
			}
			wantQ, wantOK, wantW := query(gojqOnly)
			gotQ, gotOK, gotW := query(direct)
			assert.Equal(t, wantOK, gotOK)
			assert.Equal(t, wantW.messages(), gotW.messages())
			require.Len(t, gotQ, len(wantQ))
			for i := range wantQ {
				assert.Equal(t, wantQ[i].Name, gotQ[i].Name)
				assert.Equal(t, fmt.Sprint(wantQ[i].Selector), fmt.Sprint(gotQ[i].Selector))
			}
		})
	}
}
