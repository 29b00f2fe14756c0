package argo

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/luaapi"
)

var deployment = map[string]any{
	"apiVersion": "apps/v1",
	"kind":       "Deployment",
	"metadata":   map[string]any{"name": "web", "namespace": "shop", "annotations": map[string]any{"a": "1"}},
	"spec": map[string]any{
		"replicas": int64(2),
		"selector": map[string]any{},
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "resources": map[string]any{}}}},
		},
	},
}

func TestDiscover(t *testing.T) {
	cases := []struct {
		name, body string
		want       []Action
		err        string
	}{
		{"an empty table offers nothing", `return {}`, []Action{}, ""},
		{"{} and arrays are plain actions", `return {restart = {}, pause = {true}}`, []Action{{Name: "pause"}, {Name: "restart"}}, ""},
		{"fields", `return {scale = {displayName = "Scale", iconClass = "fa", disabled = true, params = {{name = "n", type = "number", default = "1"}}}}`,
			[]Action{{Name: "scale", DisplayName: "Scale", IconClass: "fa", Disabled: true, Params: []ActionParam{{Name: "n", Type: "number", Default: "1"}}}}, ""},
		{"unknown fields are ignored", `return {scale = {hasParameters = true, regexp = "^[0-9]+$"}}`, []Action{{Name: "scale"}}, ""},
		{"a name field renames", `return {a = {name = "b"}}`, []Action{{Name: "b"}}, ""},
		{"a disabled that is not a boolean", `return {a = {disabled = "yes"}}`, nil, "error unmarshaling resource action: json: cannot unmarshal string"},
		{"a value that is not a table", `return {a = "yes"}`, nil, "error unmarshaling resource action"},
		{"an array of actions", `return {"restart"}`, nil, "error unmarshaling action table"},
		{"nil", `return nil`, nil, "expect table output from Lua script, not nil"},
		{"a string", `return "restart"`, nil, "expect table output from Lua script, not string"},
		{"a function inside", `return {a = {f = tostring}}`, nil, "cannot encode function to JSON"},
		{"obj is there", `if obj.spec.replicas == 2 then return {two = {}} end return {}`, []Action{{Name: "two"}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Compile("discovery.lua", tc.body)
			require.NoError(t, err)
			got, err := s.Discover(context.Background(), deployment)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestRunAction(t *testing.T) {
	t.Run("old style: the object itself, cleaned", func(t *testing.T) {
		s, err := Compile("action.lua", `
obj.spec.replicas = tonumber(actionParams.replicas)
obj.metadata.annotations = {}                    -- emptied: Argo CD restores the original
obj.spec.template.spec.containers[1].env = {}    -- new: stays an empty array
return obj`)
		require.NoError(t, err)
		res, err := s.RunAction(context.Background(), deployment, map[string]string{"replicas": "4"})
		require.NoError(t, err)
		assert.True(t, res.OldStyle)
		require.Len(t, res.Resources, 1)
		r := res.Resources[0]
		assert.Equal(t, OperationPatch, r.Operation)
		assert.Equal(t, int64(4), r.Object["spec"].(map[string]any)["replicas"])
		assert.Equal(t, map[string]any{}, r.Object["spec"].(map[string]any)["selector"], "an empty object read back as {} is restored")
		assert.Equal(t, map[string]any{"a": "1"}, r.Object["metadata"].(map[string]any)["annotations"], "Argo CD puts back the original object")
		c := r.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		assert.Equal(t, map[string]any{}, c["resources"], "cleaned inside arrays too")
		assert.Equal(t, []any{}, c["env"])
		assert.Equal(t, int64(2), deployment["spec"].(map[string]any)["replicas"], "the Go object is not written")
	})
	t.Run("new style: resources to create and patch", func(t *testing.T) {
		s, err := Compile("action.lua", `
local job = {apiVersion = "batch/v1", kind = "Job", metadata = {name = obj.metadata.name .. "-run", namespace = obj.metadata.namespace}}
obj.spec.selector = {}
return {{operation = "create", resource = job}, {operation = "patch", resource = obj}}`)
		require.NoError(t, err)
		res, err := s.RunAction(context.Background(), deployment, nil)
		require.NoError(t, err)
		assert.False(t, res.OldStyle)
		require.Len(t, res.Resources, 2)
		assert.Equal(t, OperationCreate, res.Resources[0].Operation)
		assert.Equal(t, "web-run", res.Resources[0].Object["metadata"].(map[string]any)["name"])
		assert.Equal(t, OperationPatch, res.Resources[1].Operation)
		assert.Equal(t, map[string]any{}, res.Resources[1].Object["spec"].(map[string]any)["selector"])
	})
	t.Run("an empty table creates and patches nothing", func(t *testing.T) {
		s, err := Compile("action.lua", `return {}`)
		require.NoError(t, err)
		res, err := s.RunAction(context.Background(), deployment, nil)
		require.NoError(t, err)
		assert.False(t, res.OldStyle)
		assert.Empty(t, res.Resources)
	})
	t.Run("actionParams is a table of strings, empty without parameters", func(t *testing.T) {
		s, err := Compile("action.lua", `obj.metadata.name = type(actionParams) .. ":" .. tostring(actionParams.n) .. ":" .. type(actionParams.n) return obj`)
		require.NoError(t, err)
		res, err := s.RunAction(context.Background(), deployment, nil)
		require.NoError(t, err)
		assert.Equal(t, "table:nil:nil", res.Resources[0].Object["metadata"].(map[string]any)["name"])
		res, err = s.RunAction(context.Background(), deployment, map[string]string{"n": "3"})
		require.NoError(t, err)
		assert.Equal(t, "table:3:string", res.Resources[0].Object["metadata"].(map[string]any)["name"])
	})
	for _, tc := range []struct{ name, body, err, argo string }{
		{"nil", `return nil`, "expect table output from Lua script, not nil", "expect table output from Lua script, not nil"},
		{"an object without a kind", `return {metadata = {name = "x"}}`, "Object 'Kind' is missing", ""},
		{"an unknown operation", `return {{operation = "delete", resource = obj}}`, `unsupported operation: "delete"`, ""},
		{"error(msg, 0)", `error("invalid number: x", 0)`, "invalid number: x", "invalid number: x"},
		{"error(msg)", "local a = 1\nerror(\"boom\")", "script:action.lua:2: boom", "<string>:2: boom"},
		{"a runtime error", "local a = nil\nreturn a.b", "script:action.lua:2: attempt to index", "<string>:2: attempt to index a non-table object(nil) with key 'b'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Compile("action.lua", tc.body)
			require.NoError(t, err)
			_, err = s.RunAction(context.Background(), deployment, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
			if tc.argo != "" {
				assert.Equal(t, tc.argo, ArgoMessage(err))
			}
		})
	}
	t.Run("limits", func(t *testing.T) {
		s, err := CompileWith("action.lua", "while true do end", luaapi.Limits{MaxInstructions: 10_000})
		require.NoError(t, err)
		_, err = s.RunAction(context.Background(), deployment, nil)
		var le *luaapi.LimitError
		require.True(t, errors.As(err, &le), "got %v", err)
		assert.Equal(t, luaapi.KindInstructions, le.Kind)
	})
}

func TestDifferences(t *testing.T) {
	got := map[string]any{"spec": map[string]any{"replicas": int64(3), "extra": "x", "list": []any{"a", "b"}}, "status": map[string]any{"ready": true}}
	assert.Empty(t, differences(map[string]any{"spec": map[string]any{"replicas": 3.0}}, got), "fields the expected object leaves out do not count")
	assert.Equal(t, []string{
		"spec.list: expected [\"a\"], got [\"a\",\"b\"]",
		"spec.missing: expected 1, got nothing",
		"spec.replicas: expected 4, got 3",
		"status: expected absent, got {\"ready\":true}",
	}, differences(map[string]any{"spec": map[string]any{"replicas": 4, "list": []any{"a"}, "missing": 1}, "status": nil}, got))
}

// An array replaces the actual one with the nulls of its objects pruned,
// as evanphx/json-patch's merge patch does in gitops-engine's diff: an
// expected edge {conditions: null, from: in} is an actual {from: in}
// (numaplane PipelineRollout's allow-data-loss test data); a null element
// of the array itself stays.
func TestDifferencesPruneNullsInArrays(t *testing.T) {
	got := map[string]any{"edges": []any{map[string]any{"from": "in", "udf": map[string]any{"builtin": "cat"}}}, "list": []any{"a"}}
	assert.Empty(t, differences(map[string]any{"edges": []any{map[string]any{"conditions": nil, "from": "in", "udf": map[string]any{"builtin": "cat", "container": nil}}}}, got))
	assert.Equal(t, []string{`list: expected ["a",null], got ["a"]`},
		differences(map[string]any{"list": []any{"a", nil}}, got))
	assert.Equal(t, []string{`edges: expected [{"from":"out"}], got [{"from":"in","udf":{"builtin":"cat"}}]`},
		differences(map[string]any{"edges": []any{map[string]any{"conditions": nil, "from": "out"}}}, got))
}

// Argo CD's ResourceActionParam holds a name only: a discovery test
// compares params by name (KEDA ScaledObject's paused-replicas offers the
// current count as its default; the test data expects "0").
func TestContainsActionComparesParamsByName(t *testing.T) {
	want := []Action{{Name: "paused-replicas", IconClass: "fa", Params: []ActionParam{{Name: "replicas", Default: "0"}}}}
	assert.True(t, containsAction(want, Action{Name: "paused-replicas", IconClass: "fa", Params: []ActionParam{{Name: "replicas", Default: "6"}}}))
	assert.False(t, containsAction(want, Action{Name: "paused-replicas", IconClass: "fa", Params: []ActionParam{{Name: "count", Default: "0"}}}))
	assert.False(t, containsAction(want, Action{Name: "paused-replicas", IconClass: "fa", Disabled: true, Params: []ActionParam{{Name: "replicas"}}}))
}

func TestNormalizeMasksTimestamps(t *testing.T) {
	obj := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "d", "generation": 3, "creationTimestamp": "x"},
		"spec":     map[string]any{"template": map[string]any{"metadata": map[string]any{"annotations": map[string]any{"kubectl.kubernetes.io/restartedAt": "2025-06-01T10:00:00Z", "other": "y"}}}},
		"status":   map[string]any{"replicas": 1},
	}
	n := normalize(obj)
	assert.Equal(t, map[string]any{"kubectl.kubernetes.io/restartedAt": masked}, nested(n, "spec", "template", "metadata", "annotations"))
	assert.Nil(t, n["status"])
	assert.Equal(t, map[string]any{"name": "d"}, n["metadata"])
	assert.Equal(t, "2025-06-01T10:00:00Z", nested(obj, "spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt"), "the object is not changed")
}
