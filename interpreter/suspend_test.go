package interpreter

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func checkedSuspend(t testing.TB, m *model, obj map[string]any, resume bool) (map[string]any, []PatchOp, error) {
	t.Helper()
	return checkedWrite(t, obj, func() (map[string]any, []PatchOp, error) {
		return m.suspend(context.Background(), obj, resume)
	})
}

func TestSuspendResume(t *testing.T) {
	pytorch := fixtureModel(t, "pytorchjob")
	for _, tc := range []struct {
		name   string
		m      *model
		obj    func(t testing.TB) map[string]any
		resume bool
		ops    string
		errs   []string
	}{{
		name: "suspend creates the missing runPolicy",
		m:    pytorch,
		obj:  fixtureFunc("pytorchjob"),
		ops:  `[{op: add, path: /spec/runPolicy, value: {suspend: true}}]`,
	}, {
		name: "resume replaces the flag",
		m:    pytorch,
		obj: func(t testing.TB) map[string]any {
			obj := fixtureObject(t, "pytorchjob")
			obj["spec"].(map[string]any)["runPolicy"] = map[string]any{"cleanPodPolicy": "None", "suspend": true}
			return obj
		},
		resume: true,
		ops:    `[{op: replace, path: /spec/runPolicy/suspend, value: false}]`,
	}, {
		name: "a null parent is replaced by an object",
		m:    pytorch,
		obj: func(t testing.TB) map[string]any {
			obj := fixtureObject(t, "pytorchjob")
			obj["spec"].(map[string]any)["runPolicy"] = nil
			return obj
		},
		ops: `[{op: replace, path: /spec/runPolicy, value: {suspend: true}}]`,
	}, {
		name: "a failing path() names the component, the action and gojq's message",
		m:    pytorch,
		obj: func(t testing.TB) map[string]any {
			obj := fixtureObject(t, "pytorchjob")
			obj["spec"].(map[string]any)["runPolicy"] = "x"
			return obj
		},
		errs: []string{`component "pytorchjob": suspendActions[0].path ".spec.runPolicy.suspend": path() failed: expected an object but got: string ("x")`},
	}, {
		name: "a JSON string value, through an escaped key",
		m:    fixtureModel(t, "inferenceservice"),
		obj:  fixtureFunc("inferenceservice"),
		ops:  `[{op: add, path: /metadata/annotations/serving.kserve.io~1stop, value: "true"}]`,
	}, {
		name:   "every location a path yields is assigned",
		m:      modelFrom(t, actionsKarta),
		obj:    func(t testing.TB) map[string]any { return objectFrom(t, actionsObject) },
		resume: true,
		ops: `
- {op: add, path: /spec/gates/0/open, value: true}
- {op: replace, path: /spec/gates/1/open, value: true}`,
	}, {
		name: "a path without locations and a non-assignable path are errors, reported together",
		m:    modelFrom(t, actionsKarta),
		obj:  func(t testing.TB) map[string]any { return objectFrom(t, actionsObject) },
		errs: []string{
			`component "gates": suspendActions[0].path ".spec.gates[]? | select(.name == \"none\") | .open" yields no location`,
			`component "gates": suspendActions[1].path ".spec.paused // \"no\"" is not assignable: literal "no" is not a path`,
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			_, ops, err := checkedSuspend(t, tc.m, tc.obj(t), tc.resume)
			if tc.errs != nil {
				require.Error(t, err)
				assert.Equal(t, tc.errs, errorLines(t, err))
				return
			}
			require.NoError(t, err)
			assertOps(t, tc.ops, ops)
		})
	}
}

// actionsKarta suspends through a filtered path (no location here) and a
// non-assignable one, and resumes through an iterated path.
const actionsKarta = `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: gates}
spec:
  structureDefinition:
    rootComponent:
      name: gates
      kind: {group: example.com, version: v1, kind: Gates}
      statusDefinition: {statusMappings: {running: [{byPhase: Running}]}}
      suspendDefinition:
        suspendActions:
        - {path: '.spec.gates[]? | select(.name == "none") | .open', value: "false"}
        - {path: '.spec.paused // "no"', value: "true"}
        resumeActions:
        - {path: '.spec.gates[].open', value: "true"}
`

const actionsObject = `
apiVersion: example.com/v1
kind: Gates
metadata: {name: g}
spec:
  gates: [{name: a}, {name: b, open: false}]
`

func TestSuspendSequentialActions(t *testing.T) {
	// A later action sees what the earlier ones wrote, as a chain of jq
	// assignments would, and may overwrite it.
	m := modelFrom(t, `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: seq}
spec:
  structureDefinition:
    rootComponent:
      name: seq
      kind: {group: example.com, version: v1, kind: Seq}
      statusDefinition: {statusMappings: {running: [{byPhase: Running}]}}
      suspendDefinition:
        suspendActions:
        - {path: .spec.policy, value: '{"suspend": false, "mode": "x"}'}
        - {path: .spec.policy.suspend, value: "true"}
        resumeActions:
        - {path: .spec.policy.suspend, value: "false"}
    childComponents:
    - name: part
      ownerRef: seq
      suspendDefinition:
        suspendActions: [{path: .spec.policy.mode, value: '"all"'}]
        resumeActions: [{path: .spec.policy.mode, value: '"none"'}]
`)
	obj := objectFrom(t, "spec: {}")
	out, ops, err := checkedSuspend(t, m, obj, false)
	require.NoError(t, err)
	assertOps(t, `[{op: add, path: /spec/policy, value: {suspend: true, mode: all}}]`, ops)

	// The model's value is copied into each result, never shared.
	out["spec"].(map[string]any)["policy"].(map[string]any)["extra"] = 1
	out2, _, err := checkedSuspend(t, m, obj, false)
	require.NoError(t, err)
	assert.Nil(t, getPath(out2, "spec", "policy", "extra"))
}

func TestSuspendNotDefined(t *testing.T) {
	m := fixtureModel(t, "leaderworkerset")
	_, _, err := m.suspend(context.Background(), fixtureObject(t, "leaderworkerset"), true)
	var nd *NotDefinedError
	require.ErrorAs(t, err, &nd)
	assert.EqualError(t, err, `karta "leaderworkerset": Resume is not defined: no component has a suspendDefinition`)
}

func TestReviseReplica(t *testing.T) {
	for _, tc := range []struct {
		name    string
		m       *model
		obj     func(t testing.TB) map[string]any
		n       int64
		ops     string
		err     string
		defined bool // the error is a *NotDefinedError
	}{{
		name: "the root's replicasPath",
		m:    fixtureModel(t, "leaderworkerset"),
		obj:  fixtureFunc("leaderworkerset"),
		n:    5,
		ops:  `[{op: replace, path: /spec/replicas, value: 5}]`,
	}, {
		name: "the only pod-bearing component with a single instance",
		m:    fixtureModel(t, "milvus"),
		obj:  fixtureFunc("milvus"),
		n:    3,
		ops:  `[{op: replace, path: /spec/components/proxy/replicas, value: 3}]`,
	}, {
		name: "the only pod-bearing component without an instance",
		m:    fixtureModel(t, "milvus"),
		obj: func(t testing.TB) map[string]any {
			obj := fixtureObject(t, "milvus")
			obj["spec"].(map[string]any)["mode"] = "standalone"
			return obj
		},
		n:   3,
		err: `karta "milvus": ReviseReplica: component "proxy" has 0 instances (none), not one`,
	}, {
		name:    "several pod-bearing components and no root replicasPath",
		m:       fixtureModel(t, "pytorchjob"),
		obj:     fixtureFunc("pytorchjob"),
		n:       1,
		err:     `karta "pytorchjob": ReviseReplica is not defined: the root has no replicasPath and there are 2 pod-bearing components, not one`,
		defined: true,
	}, {
		name: "a default is written through its field when the field is set",
		m:    modelFrom(t, replicaKarta(".spec.replicas // 1")),
		obj:  func(t testing.TB) map[string]any { return objectFrom(t, "spec: {replicas: 2}") },
		n:    4,
		ops:  `[{op: replace, path: /spec/replicas, value: 4}]`,
	}, {
		name: "a default is written through its field when the field is missing",
		m:    modelFrom(t, replicaKarta(".spec.replicas // 1")),
		obj:  func(t testing.TB) map[string]any { return objectFrom(t, "spec: {}") },
		n:    3,
		ops:  `[{op: add, path: /spec/replicas, value: 3}]`,
	}, {
		name: "a default is written through its field when the field is 0",
		m:    modelFrom(t, replicaKarta(".spec.replicas // 1")),
		obj:  func(t testing.TB) map[string]any { return objectFrom(t, "spec: {replicas: 0}") },
		n:    2,
		ops:  `[{op: replace, path: /spec/replicas, value: 2}]`,
	}, {
		name:    "a replicasPath that is not assignable",
		m:       modelFrom(t, replicaKarta(`.spec.replicas // "1"`)),
		obj:     func(t testing.TB) map[string]any { return objectFrom(t, "spec: {replicas: 2}") },
		n:       1,
		err:     `karta "single": ReviseReplica is not defined: component "main": replicasPath ".spec.replicas // \"1\"" is not assignable: literal "1" is not a path`,
		defined: true,
	}, {
		name: "a replicasPath yielding two locations",
		m:    modelFrom(t, replicaKarta(".spec.a, .spec.b")),
		obj:  func(t testing.TB) map[string]any { return objectFrom(t, "spec: {a: 1, b: 1}") },
		n:    1,
		err:  `component "main": replicasPath ".spec.a, .spec.b" yields 2 location(s), not 1`,
	}, {
		name: "a missing replicas field is created",
		m:    modelFrom(t, replicaKarta(".spec.scale.replicas")),
		obj:  func(t testing.TB) map[string]any { return objectFrom(t, "spec: {}") },
		n:    0,
		ops:  `[{op: add, path: /spec/scale, value: {replicas: 0}}]`,
	}, {
		name: "out of range",
		m:    fixtureModel(t, "leaderworkerset"),
		obj:  fixtureFunc("leaderworkerset"),
		n:    -1,
		err:  `karta "leaderworkerset": ReviseReplica: -1 is out of range 0…2147483647`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			obj := tc.obj(t)
			_, ops, err := checkedWrite(t, obj, func() (map[string]any, []PatchOp, error) {
				return tc.m.reviseReplica(context.Background(), obj, tc.n)
			})
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				var nd *NotDefinedError
				assert.Equal(t, tc.defined, errors.As(err, &nd))
				return
			}
			require.NoError(t, err)
			assertOps(t, tc.ops, ops)
		})
	}
}

func replicaKarta(path string) string {
	return `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: single}
spec:
  structureDefinition:
    rootComponent:
      name: single
      kind: {group: example.com, version: v1, kind: Single}
      statusDefinition: {statusMappings: {running: [{byPhase: Running}]}}
    childComponents:
    - name: main
      ownerRef: single
      specDefinition: {podTemplateSpecPath: .spec.template}
      scaleDefinition: {replicasPath: '` + path + `'}
`
}
