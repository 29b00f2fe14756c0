package karmada

import (
	"context"
	"encoding/json"
	"fmt"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8sjson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kartalua/karta/karmada/kube"
)

// The operations, each with Karmada's calling convention and result rules
// (luavm.VM in Karmada). Objects reach Lua as Karmada passes them
// (kube.Value, as lazy tables: kube.Lazy); table results are converted by
// kube.Unmarshal, with the inputs as empty-table references for
// Retain (desired, observed) and ReviseReplica (the object) only.

// GetReplicas runs InterpretReplica: GetReplicas(obj) returns the replica
// count, a number truncated to int32 as Go converts it, and the
// requirements of one replica, a table or nil.
func (in *Interpreter) GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (replicas int32, requires *ReplicaRequirements, err error) {
	a, err := in.scriptsFor(obj, OpInterpretReplica)
	if err != nil {
		return 0, nil, err
	}
	err = in.call(ctx, a.scripts[OpInterpretReplica], 2, in.objectArgs(obj), func(L *lua.LState, res []lua.LValue) error {
		n, ok := res[0].(lua.LNumber)
		if !ok {
			return &ResultError{Msg: fmt.Sprintf("result type %s is not number", res[0].Type())}
		}
		replicas = int32(n) // Karmada's conversion, truncation and all
		switch r := res[1].(type) {
		case *lua.LNilType:
			return nil
		case *lua.LTable:
			requires = &ReplicaRequirements{}
			return kube.Unmarshal(L, r, requires)
		default:
			return &ResultError{Msg: "expect the returned requires type is table but got " + res[1].Type().String()}
		}
	})
	if err != nil {
		return 0, nil, err
	}
	return replicas, requires, nil
}

// GetComponents runs InterpretComponent: GetComponents(obj) returns an
// array of components (name, replicas, replicaRequirements). nil is no
// components.
func (in *Interpreter) GetComponents(ctx context.Context, obj *unstructured.Unstructured) ([]Component, error) {
	a, err := in.scriptsFor(obj, OpInterpretComponent)
	if err != nil {
		return nil, err
	}
	var components []Component
	err = in.call(ctx, a.scripts[OpInterpretComponent], 1, in.objectArgs(obj), func(L *lua.LState, res []lua.LValue) error {
		switch r := res[0].(type) {
		case *lua.LNilType:
			return nil
		case *lua.LTable:
			return kube.Unmarshal(L, r, &components)
		default:
			return &ResultError{Msg: "expect the returned components type is table but got " + res[0].Type().String()}
		}
	})
	if err != nil {
		return nil, err
	}
	return components, nil
}

// ReviseReplica runs ReviseReplica(obj, replicas) and returns the revised
// object (an empty table returned is `{}`, which has no kind: an error).
func (in *Interpreter) ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, error) {
	a, err := in.scriptsFor(obj, OpReviseReplica)
	if err != nil {
		return nil, err
	}
	args := func(L *lua.LState) ([]lua.LValue, error) {
		v, err := in.objectArgs(obj)(L)
		return append(v, lua.LNumber(replicas)), err
	}
	return in.objectResult(ctx, a.scripts[OpReviseReplica], args, obj)
}

// Retain runs Retain(desired, observed) and returns the retained object.
// Empty tables are repaired against both objects.
func (in *Interpreter) Retain(ctx context.Context, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	a, err := in.scriptsFor(desired, OpRetain)
	if err != nil {
		return nil, err
	}
	if observed == nil {
		return nil, &CallError{Customization: a.scripts[OpRetain].customization, Operation: OpRetain, Err: &ResultError{Msg: "no observed object given"}}
	}
	return in.objectResult(ctx, a.scripts[OpRetain], in.objectArgs(desired, observed), desired, observed)
}

// AggregateStatus runs AggregateStatus(obj, statusItems) and returns the
// object with its status aggregated. A nil items is Lua nil; an empty one
// an empty table. Nested empty tables of the result are deleted (Karmada
// passes no references).
func (in *Interpreter) AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []AggregatedStatusItem) (*unstructured.Unstructured, error) {
	a, err := in.scriptsFor(obj, OpAggregateStatus)
	if err != nil {
		return nil, err
	}
	args := func(L *lua.LState) ([]lua.LValue, error) {
		v, err := in.objectArgs(obj)(L)
		if err != nil {
			return nil, err
		}
		var lv lua.LValue = lua.LNil
		if items != nil {
			var v any = items
			if g, ok := itemsJSON(items); ok {
				v = g
			}
			if lv, err = in.argValue(L, v); err != nil {
				return nil, err
			}
		}
		return append(v, lv), nil
	}
	return in.objectResult(ctx, a.scripts[OpAggregateStatus], args)
}

// objectResult runs a script whose one result is a whole object.
func (in *Interpreter) objectResult(ctx context.Context, s *script, args argsFunc, references ...any) (*unstructured.Unstructured, error) {
	out := &unstructured.Unstructured{}
	err := in.call(ctx, s, 1, args, func(L *lua.LState, res []lua.LValue) error {
		tb, ok := res[0].(*lua.LTable)
		if !ok {
			return &ResultError{Msg: "expect the returned requires type is table but got " + res[0].Type().String()}
		}
		return kube.Unmarshal(L, tb, out, references...)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReflectStatusRaw runs InterpretStatus: ReflectStatus(obj) must return a
// table (nil is an error). The result is the JSON Karmada stores as the
// raw status (runtime.RawExtension), byte for byte: an empty table is {}.
func (in *Interpreter) ReflectStatusRaw(ctx context.Context, obj *unstructured.Unstructured) ([]byte, error) {
	a, err := in.scriptsFor(obj, OpInterpretStatus)
	if err != nil {
		return nil, err
	}
	var raw runtime.RawExtension
	err = in.call(ctx, a.scripts[OpInterpretStatus], 1, in.objectArgs(obj), func(L *lua.LState, res []lua.LValue) error {
		tb, ok := res[0].(*lua.LTable)
		if !ok {
			return &ResultError{Msg: "expect the returned replica type is table but got " + res[0].Type().String()}
		}
		return kube.Unmarshal(L, tb, &raw)
	})
	if err != nil {
		return nil, err
	}
	return raw.Raw, nil
}

// ReflectStatus is ReflectStatusRaw decoded: the status object, numbers as
// int64 or float64 as in unstructured objects. A status that is not a JSON
// object (a non-empty array) is a *ResultError.
func (in *Interpreter) ReflectStatus(ctx context.Context, obj *unstructured.Unstructured) (map[string]any, error) {
	raw, err := in.ReflectStatusRaw(ctx, obj)
	if err != nil {
		return nil, err
	}
	var status map[string]any
	if err := k8sjson.Unmarshal(raw, &status); err != nil {
		s := in.accessors[obj.GroupVersionKind()].scripts[OpInterpretStatus]
		return nil, &CallError{Customization: s.customization, Operation: OpInterpretStatus, Err: &ResultError{Msg: "the status is not an object", Err: err}}
	}
	return status, nil
}

// InterpretHealth runs InterpretHealth(obj), which must return a boolean:
// anything else, nil included, is an error.
func (in *Interpreter) InterpretHealth(ctx context.Context, obj *unstructured.Unstructured) (bool, error) {
	a, err := in.scriptsFor(obj, OpInterpretHealth)
	if err != nil {
		return false, err
	}
	var healthy bool
	err = in.call(ctx, a.scripts[OpInterpretHealth], 1, in.objectArgs(obj), func(_ *lua.LState, res []lua.LValue) error {
		b, ok := res[0].(lua.LBool)
		if !ok {
			return &ResultError{Msg: fmt.Sprintf("result type %s is not bool", res[0].Type())}
		}
		healthy = bool(b)
		return nil
	})
	return healthy, err
}

// itemsJSON is the JSON value of items that kube.Value would reach by way
// of encoding/json (a member per field, omitempty honoured, each status
// decoded), built without the round trip of the whole list; ok is false
// when a status is not valid JSON, whose error kube.Value then gives.
func itemsJSON(items []AggregatedStatusItem) ([]any, bool) {
	out := make([]any, len(items))
	for i, it := range items {
		m := map[string]any{"clusterName": it.ClusterName}
		if it.Status != nil {
			if it.Status.Raw == nil {
				m["status"] = nil // RawExtension marshals as null
			} else {
				status, ok := decodeStatusJSON(it.Status.Raw)
				if !ok {
					if err := json.Unmarshal(it.Status.Raw, &status); err != nil {
						return nil, false
					}
				}
				m["status"] = status
			}
		}
		if it.Applied {
			m["applied"] = true
		}
		if it.AppliedMessage != "" {
			m["appliedMessage"] = it.AppliedMessage
		}
		if it.Health != "" {
			m["health"] = string(it.Health)
		}
		out[i] = m
	}
	return out, true
}
