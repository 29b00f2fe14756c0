package karmada

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/luaapi"
)

var widgetGVK = schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Widget"}

// cust is a Widget customization with the given scripts.
func cust(name string, scripts map[Operation]string) *Customization {
	c := &Customization{Spec: CustomizationSpec{Target: CustomizationTarget{APIVersion: "example.io/v1", Kind: "Widget"}}}
	c.Name = name
	r := &c.Spec.Customizations
	for op, text := range scripts {
		rule := &LuaRule{LuaScript: text}
		switch op {
		case OpRetain:
			r.Retention = rule
		case OpInterpretReplica:
			r.ReplicaResource = rule
		case OpInterpretComponent:
			r.ComponentResource = rule
		case OpReviseReplica:
			r.ReplicaRevision = rule
		case OpInterpretStatus:
			r.StatusReflection = rule
		case OpAggregateStatus:
			r.StatusAggregation = rule
		case OpInterpretHealth:
			r.HealthInterpretation = rule
		case OpInterpretDependency:
			r.DependencyInterpretation = rule
		}
	}
	return c
}

func newInterp(t *testing.T, opts Options, custs ...*Customization) *Interpreter {
	t.Helper()
	in, err := NewInterpreter(custs, opts)
	require.NoError(t, err)
	t.Cleanup(in.Close)
	return in
}

func widget(fields map[string]any) *unstructured.Unstructured {
	obj := map[string]any{"apiVersion": "example.io/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": "ns"}}
	for k, v := range fields {
		obj[k] = v
	}
	return &unstructured.Unstructured{Object: obj}
}

// Customizations of one kind merge in name order: the first that scripts
// an operation wins (a rule with an empty script does not count), and
// every dependency script runs, their results unioned.
func TestPrecedenceAndDependencyUnion(t *testing.T) {
	ctx := context.Background()
	in := newInterp(t, Options{},
		cust("b-second", map[Operation]string{
			OpInterpretHealth: `function InterpretHealth(obj) return true end`,
			OpRetain:          `function Retain(d, o) d.metadata.labels = {from = "b"} return d end`,
			OpInterpretDependency: `function GetDependencies(obj) return {
				{apiVersion = "v1", kind = "Secret", namespace = "ns", name = "y"},
				{apiVersion = "v1", kind = "ConfigMap", namespace = "ns", name = "x"}} end`,
		}),
		cust("a-first", map[Operation]string{
			OpInterpretHealth:     `function InterpretHealth(obj) return false end`,
			OpRetain:              ``,
			OpInterpretDependency: `function GetDependencies(obj) return {{apiVersion = "v1", kind = "ConfigMap", namespace = "ns", name = "x"}} end`,
		}))
	healthy, err := in.InterpretHealth(ctx, widget(nil))
	require.NoError(t, err)
	assert.False(t, healthy, "a-first sorts first and wins")

	retained, err := in.Retain(ctx, widget(nil), widget(nil))
	require.NoError(t, err)
	assert.Equal(t, "b", retained.GetLabels()["from"], "a-first's empty retention script leaves the slot to b-second")

	deps, err := in.GetDependencies(ctx, widget(nil))
	require.NoError(t, err)
	assert.Equal(t, []DependentObjectReference{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "x"},
		{APIVersion: "v1", Kind: "Secret", Namespace: "ns", Name: "y"},
	}, deps)

	assert.True(t, in.HookEnabled(widgetGVK, OpInterpretDependency))
	assert.True(t, in.HookEnabled(widgetGVK, OpRetain))
	assert.False(t, in.HookEnabled(widgetGVK, OpInterpretStatus))
	assert.False(t, in.HookEnabled(schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, OpRetain))
	_, err = in.ReflectStatus(ctx, widget(nil))
	assert.ErrorIs(t, err, ErrNotEnabled)
	var ne *NotEnabledError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, OpInterpretStatus, ne.Operation)
	assert.Equal(t, []schema.GroupVersionKind{widgetGVK}, in.Kinds())
}

// Karmada's set holds DependentObjectReference values, whose label
// selector is a pointer: references with selectors never merge.
func TestDependenciesWithSelectorsAreNotMerged(t *testing.T) {
	in := newInterp(t, Options{}, cust("w", map[Operation]string{OpInterpretDependency: `function GetDependencies(obj)
		local sel = {apiVersion = "v1", kind = "Secret", namespace = "ns", labelSelector = {matchLabels = {app = "x"}}}
		local sel2 = {apiVersion = "v1", kind = "Secret", namespace = "ns", labelSelector = {matchLabels = {app = "x"}}}
		return {sel, sel2, {apiVersion = "v1", kind = "Secret", namespace = "ns", name = "s"}, {apiVersion = "v1", kind = "Secret", namespace = "ns", name = "s"}}
	end`}))
	deps, err := in.GetDependencies(context.Background(), widget(nil))
	require.NoError(t, err)
	require.Len(t, deps, 3)
	assert.Equal(t, map[string]string{"app": "x"}, deps[0].LabelSelector.MatchLabels)
	assert.Equal(t, "s", deps[2].Name)
}

func TestGetDependenciesValidation(t *testing.T) {
	for _, tc := range []struct{ ret, want string }{
		{`{{kind = "Secret", name = "s"}}`, "dependencies[0].apiVersion: Invalid value: \"\": missing required apiVersion"},
		{`{{apiVersion = "v1", name = "s"}}`, "dependencies[0].kind: Invalid value: \"\": missing required kind"},
		{`{{apiVersion = "v1", kind = "Secret"}}`, "dependency can not leave name and labelSelector all empty"},
		{`{{apiVersion = "v1", kind = "Secret", name = "ok"}, {apiVersion = "v1", kind = "Secret", labelSelector = {matchExpressions = {{key = "a", operator = "Near"}}}}}`,
			"dependencies[1].labelSelector.matchExpressions[0].operator"},
		{`"secret"`, "expect the returned requires type is table but got string"},
		{`{{apiVersion = "v1", kind = "Secret", name = 5}}`, "cannot unmarshal number"},
	} {
		in := newInterp(t, Options{}, cust("w", map[Operation]string{OpInterpretDependency: "function GetDependencies(obj) return " + tc.ret + " end"}))
		_, err := in.GetDependencies(context.Background(), widget(nil))
		require.Error(t, err, tc.ret)
		assert.Contains(t, err.Error(), tc.want)
		var re *ResultError
		assert.ErrorAs(t, err, &re, tc.ret)
		var ce *CallError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "w", ce.Customization)
	}
}

// Karmada's empty-table rules for results: a Lua {} is `[]`; for an
// object result that becomes {}, which has no kind; for a status it is {}.
// Nested empty tables are deleted unless the references (Retain: desired
// and observed; ReviseReplica: the object) had them.
func TestEmptyTableRules(t *testing.T) {
	ctx := context.Background()
	in := newInterp(t, Options{}, cust("w", map[Operation]string{
		OpRetain:          `function Retain(d, o) return {} end`,
		OpReviseReplica:   `function ReviseReplica(obj, n) return {} end`,
		OpAggregateStatus: `function AggregateStatus(obj, items) return {} end`,
		OpInterpretStatus: `function ReflectStatus(obj) return {} end`,
	}))
	_, err := in.Retain(ctx, widget(nil), widget(nil))
	assert.ErrorContains(t, err, "'Kind' is missing")
	_, err = in.ReviseReplica(ctx, widget(nil), 3)
	assert.ErrorContains(t, err, "'Kind' is missing")
	_, err = in.AggregateStatus(ctx, widget(nil), nil)
	assert.ErrorContains(t, err, "'Kind' is missing")
	raw, err := in.ReflectStatusRaw(ctx, widget(nil))
	require.NoError(t, err)
	assert.Equal(t, "{}", string(raw))
	status, err := in.ReflectStatus(ctx, widget(nil))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{}, status)

	in = newInterp(t, Options{}, cust("w", map[Operation]string{
		OpRetain: `function Retain(d, o)
			d.spec.extra = {}
			d.status = o.status
			return d
		end`,
		OpReviseReplica: `function ReviseReplica(obj, n) obj.spec.replicas = n obj.spec.added = {} return obj end`,
		OpAggregateStatus: `function AggregateStatus(obj, items)
			obj.status = {conditions = {}, replicas = #items}
			return obj
		end`,
	}))
	desired := widget(map[string]any{"spec": map[string]any{"selector": map[string]any{}, "ports": []any{}}})
	observed := widget(map[string]any{"status": map[string]any{"conditions": []any{}, "details": map[string]any{}}})
	retained, err := in.Retain(ctx, desired, observed)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"selector": map[string]any{}, "ports": []any{}}, retained.Object["spec"], "extra is dropped")
	assert.Equal(t, map[string]any{"conditions": []any{}, "details": map[string]any{}}, retained.Object["status"])

	revised, err := in.ReviseReplica(ctx, desired, 4)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"selector": map[string]any{}, "ports": []any{}, "replicas": int64(4)}, revised.Object["spec"])

	aggregated, err := in.AggregateStatus(ctx, widget(map[string]any{"status": map[string]any{"conditions": []any{}}}), []AggregatedStatusItem{})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"replicas": int64(0)}, aggregated.Object["status"], "no references: the empty conditions go")
}

// ReflectStatus, GetComponents and the object operations need a table.
func TestResultsMustBeTables(t *testing.T) {
	ctx := context.Background()
	in := newInterp(t, Options{}, cust("w", map[Operation]string{
		OpInterpretStatus:    `function ReflectStatus(obj) return nil end`,
		OpInterpretComponent: `function GetComponents(obj) return "main" end`,
		OpRetain:             `function Retain(d, o) return true end`,
	}))
	_, err := in.ReflectStatus(ctx, widget(nil))
	assert.EqualError(t, err, `customization "w": ReflectStatus: expect the returned replica type is table but got nil`)
	_, err = in.GetComponents(ctx, widget(nil))
	assert.EqualError(t, err, `customization "w": GetComponents: expect the returned components type is table but got string`)
	_, err = in.Retain(ctx, widget(nil), widget(nil))
	assert.EqualError(t, err, `customization "w": Retain: expect the returned requires type is table but got boolean`)
	var re *ResultError
	assert.ErrorAs(t, err, &re)
}

func TestInterpretHealthNeedsABoolean(t *testing.T) {
	for ret, want := range map[string]string{
		"true": "", "false": "",
		"nil": "result type nil is not bool", "1": "result type number is not bool", `"true"`: "result type string is not bool",
	} {
		in := newInterp(t, Options{}, cust("w", map[Operation]string{OpInterpretHealth: "function InterpretHealth(obj) return " + ret + " end"}))
		healthy, err := in.InterpretHealth(context.Background(), widget(nil))
		if want == "" {
			require.NoError(t, err)
			assert.Equal(t, ret == "true", healthy)
			continue
		}
		assert.ErrorContains(t, err, want)
		var re *ResultError
		assert.ErrorAs(t, err, &re)
	}
}

func TestGetReplicas(t *testing.T) {
	for _, tc := range []struct {
		ret      string
		replicas int32
		requires *ReplicaRequirements
		err      string
	}{
		{ret: "3", replicas: 3},
		{ret: "2.9", replicas: 2},
		{ret: "-1.5", replicas: -1},
		{ret: "obj.spec.replicas, {}", replicas: 5, requires: &ReplicaRequirements{}},
		// The empty nodeSelector is deleted, leaving nodeClaim an empty
		// object: a non-nil, empty claim.
		{ret: `1, {resourceRequest = {cpu = 1, memory = "1Gi"}, nodeClaim = {nodeSelector = {}}}`, replicas: 1,
			requires: &ReplicaRequirements{NodeClaim: &NodeClaim{}, ResourceRequest: corev1.ResourceList{"cpu": resource.MustParse("1"), "memory": resource.MustParse("1Gi")}}},
		{ret: `1, kube.accuratePodRequirements(obj.spec.template)`, replicas: 1,
			requires: &ReplicaRequirements{ResourceRequest: corev1.ResourceList{"cpu": resource.MustParse("250m")}}},
		{ret: `"3"`, err: "result type string is not number"},
		{ret: `1, "x"`, err: "expect the returned requires type is table but got string"},
		{ret: `1, {resourceRequest = {cpu = "lots"}}`, err: "quantities must match"},
	} {
		in := newInterp(t, Options{}, cust("w", map[Operation]string{OpInterpretReplica: "local kube = require('kube')\nfunction GetReplicas(obj) return " + tc.ret + " end"}))
		obj := widget(map[string]any{"spec": map[string]any{"replicas": int64(5), "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "c", "resources": map[string]any{"limits": map[string]any{"cpu": "250m"}}}}}}}})
		replicas, requires, err := in.GetReplicas(context.Background(), obj)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.ret)
			continue
		}
		require.NoError(t, err, tc.ret)
		assert.Equal(t, tc.replicas, replicas, tc.ret)
		assert.True(t, semantic.DeepEqual(tc.requires, requires), "%s: %+v", tc.ret, requires)
	}
}

func TestGetComponents(t *testing.T) {
	in := newInterp(t, Options{}, cust("w", map[Operation]string{OpInterpretComponent: `local kube = require("kube")
		function GetComponents(obj)
			if obj.spec == nil then return nil end
			local out = {}
			for _, name in ipairs({"driver", "executor"}) do
				local c = obj.spec[name]
				table.insert(out, {name = name, replicas = c.replicas or 1, replicaRequirements = kube.accuratePodRequirements(c.template)})
			end
			return out
		end`}))
	obj := widget(map[string]any{"spec": map[string]any{
		"driver":   map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "d", "resources": map[string]any{"requests": map[string]any{"cpu": "1"}}}}}}},
		"executor": map[string]any{"replicas": int64(3), "template": map[string]any{}},
	}})
	components, err := in.GetComponents(context.Background(), obj)
	require.NoError(t, err)
	want := []Component{
		{Name: "driver", Replicas: 1, ReplicaRequirements: &ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{"cpu": resource.MustParse("1")}}},
		{Name: "executor", Replicas: 3},
	}
	assert.True(t, semantic.DeepEqual(want, components), "%+v", components)

	components, err = in.GetComponents(context.Background(), widget(nil))
	require.NoError(t, err)
	assert.Nil(t, components)
}

// Status items reach Lua as Karmada marshals them: nil is nil, and
// omitempty fields are absent (applied=false arrives as nil).
func TestAggregateStatusItems(t *testing.T) {
	in := newInterp(t, Options{}, cust("w", map[Operation]string{OpAggregateStatus: `function AggregateStatus(obj, items)
		if items == nil then obj.status = {items = "nil"} return obj end
		local seen = {}
		for i, item in ipairs(items) do
			seen[i] = string.format("%s applied=%s health=%s ready=%s", item.clusterName, tostring(item.applied), tostring(item.health),
				tostring(item.status and item.status.ready))
		end
		obj.status = {seen = seen}
		return obj
	end`}))
	ctx := context.Background()
	out, err := in.AggregateStatus(ctx, widget(nil), nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"items": "nil"}, out.Object["status"])

	items, err := LoadStatusItems([]byte(`
- clusterName: m1
  applied: true
  health: Healthy
  status: {ready: 2}
- clusterName: m2
  applied: false
`), "items.yaml")
	require.NoError(t, err)
	out, err = in.AggregateStatus(ctx, widget(nil), items)
	require.NoError(t, err)
	assert.Equal(t, []any{"m1 applied=true health=Healthy ready=2", "m2 applied=nil health=nil ready=nil"}, out.Object["status"].(map[string]any)["seen"])
}

func TestCallErrors(t *testing.T) {
	ctx := context.Background()
	in := newInterp(t, Options{Limits: luaapi.Limits{MaxInstructions: 100000}}, cust("w", map[Operation]string{
		OpInterpretHealth:  `function Healthy(obj) return true end`,
		OpInterpretStatus:  `ReflectStatus = 3`,
		OpInterpretReplica: `function GetReplicas(obj) return obj.spec.replicas end`,
		OpAggregateStatus:  `function AggregateStatus(obj) while true do end end`,
	}))
	_, err := in.InterpretHealth(ctx, widget(nil))
	var ue *UndefinedFunctionError
	require.ErrorAs(t, err, &ue)
	assert.EqualError(t, err, `customization "w": InterpretHealth: not found function InterpretHealth`)
	_, err = in.ReflectStatus(ctx, widget(nil))
	assert.EqualError(t, err, `customization "w": ReflectStatus: ReflectStatus is not a function: number`)

	_, _, err = in.GetReplicas(ctx, widget(nil))
	var le *luaapi.LuaError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "karmada:w/replicaResource", le.Chunk)
	assert.Contains(t, err.Error(), "attempt to index")

	_, err = in.AggregateStatus(ctx, widget(nil), nil)
	var limit *luaapi.LimitError
	require.ErrorAs(t, err, &limit)
	assert.Equal(t, luaapi.KindInstructions, limit.Kind)

	_, err = NewInterpreter([]*Customization{cust("broken", map[Operation]string{OpRetain: "function Retain(d, o"})}, Options{})
	var se *ScriptError
	require.ErrorAs(t, err, &se)
	assert.Contains(t, err.Error(), `customization "broken": spec.customizations.retention.luaScript: karmada:broken/retention: at EOF: syntax error`)

	in.Close()
	_, err = in.InterpretHealth(ctx, widget(nil))
	assert.True(t, errors.Is(err, errClosed), "%v", err)
}

// Calls share states from a small pool, each in its own environment: a
// global one call sets is never seen by another.
func TestConcurrentCalls(t *testing.T) {
	in := newInterp(t, Options{PoolSize: 2}, cust("w", map[Operation]string{
		OpInterpretReplica: `function GetReplicas(obj)
			if seen ~= nil then error("a global leaked from another call") end
			seen = obj.spec.replicas
			return seen, nil
		end`,
	}))
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, _, err := in.GetReplicas(context.Background(), widget(map[string]any{"spec": map[string]any{"replicas": int64(i)}}))
			if err == nil && n != int32(i) {
				err = fmt.Errorf("got %d for %d", n, i)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
