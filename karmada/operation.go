package karmada

import (
	"fmt"
	"strings"
)

// Operation is a Karmada interpreter operation (configv1alpha1
// InterpreterOperation) that a customization can script.
type Operation string

// The operations a ResourceInterpreterCustomization scripts, each with the
// Lua function its script defines.
const (
	OpRetain              Operation = "Retain"              // Retain(desired, observed)
	OpInterpretReplica    Operation = "InterpretReplica"    // GetReplicas(obj)
	OpInterpretComponent  Operation = "InterpretComponent"  // GetComponents(obj)
	OpReviseReplica       Operation = "ReviseReplica"       // ReviseReplica(obj, replicas)
	OpInterpretStatus     Operation = "InterpretStatus"     // ReflectStatus(obj)
	OpAggregateStatus     Operation = "AggregateStatus"     // AggregateStatus(obj, statusItems)
	OpInterpretHealth     Operation = "InterpretHealth"     // InterpretHealth(obj)
	OpInterpretDependency Operation = "InterpretDependency" // GetDependencies(obj)
)

// Operations lists every operation, in the order of Karmada's rules.
var Operations = []Operation{
	OpRetain, OpInterpretReplica, OpInterpretComponent, OpReviseReplica,
	OpInterpretStatus, OpAggregateStatus, OpInterpretHealth, OpInterpretDependency,
}

// opInfo is what an operation is called in a customization and in Lua.
type opInfo struct {
	field string // the CustomizationRules field (JSON name)
	hook  string // the Lua function the script defines
	rule  func(*CustomizationRules) *LuaRule
}

var opInfos = map[Operation]opInfo{
	OpRetain:              {"retention", "Retain", func(r *CustomizationRules) *LuaRule { return r.Retention }},
	OpInterpretReplica:    {"replicaResource", "GetReplicas", func(r *CustomizationRules) *LuaRule { return r.ReplicaResource }},
	OpInterpretComponent:  {"componentResource", "GetComponents", func(r *CustomizationRules) *LuaRule { return r.ComponentResource }},
	OpReviseReplica:       {"replicaRevision", "ReviseReplica", func(r *CustomizationRules) *LuaRule { return r.ReplicaRevision }},
	OpInterpretStatus:     {"statusReflection", "ReflectStatus", func(r *CustomizationRules) *LuaRule { return r.StatusReflection }},
	OpAggregateStatus:     {"statusAggregation", "AggregateStatus", func(r *CustomizationRules) *LuaRule { return r.StatusAggregation }},
	OpInterpretHealth:     {"healthInterpretation", "InterpretHealth", func(r *CustomizationRules) *LuaRule { return r.HealthInterpretation }},
	OpInterpretDependency: {"dependencyInterpretation", "GetDependencies", func(r *CustomizationRules) *LuaRule { return r.DependencyInterpretation }},
}

// Hook is the Lua function the operation's script defines and Karmada
// calls: GetReplicas for InterpretReplica, and so on.
func (op Operation) Hook() string { return opInfos[op].hook }

// Field is the customizations field that holds the operation's script
// (retention, replicaResource…).
func (op Operation) Field() string { return opInfos[op].field }

// Script returns the operation's script in rules, "" when there is none.
func (op Operation) Script(rules *CustomizationRules) string {
	info, ok := opInfos[op]
	if !ok {
		return ""
	}
	if r := info.rule(rules); r != nil {
		return r.LuaScript
	}
	return ""
}

// ParseOperation finds an operation by name, ignoring case, as Karmada's
// test harness and karmadactl do ("interpretreplica"). The names of the
// Lua functions (GetReplicas…) are accepted too.
func ParseOperation(name string) (Operation, error) {
	for _, op := range Operations {
		if strings.EqualFold(name, string(op)) || strings.EqualFold(name, op.Hook()) {
			return op, nil
		}
	}
	names := make([]string, len(Operations))
	for i, op := range Operations {
		names[i] = string(op)
	}
	return "", fmt.Errorf("unknown operation %q (want one of %s)", name, strings.Join(names, ", "))
}
