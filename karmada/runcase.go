package karmada

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/kartalua/karta/internal/textdiff"
	"github.com/kartalua/karta/luaapi"
)

// Result is one named output of an operation, with the keys of Karmada's
// test files: retained, replica and requires, components, revised,
// status, aggregatedStatus, healthy, dependencies.
type Result struct {
	Name  string
	Value any
}

// RunOperation runs op on the case's inputs, as Karmada's interpreter
// rules (pkg/util/interpreter) do, and returns its named results in
// Karmada's order. Retain needs desiredObj and observedObj; every other
// operation exactly one of them. AggregateStatus without statusItems
// passes nil (Karmada's suite expects it). A status is returned as the raw
// JSON (a *runtime.RawExtension, compared as text).
func (in *Interpreter) RunOperation(ctx context.Context, op Operation, tc *TestCase) ([]Result, error) {
	results, err := in.runOperation(ctx, op, tc)
	if err != nil {
		return nil, err
	}
	return results, nil
}

func (in *Interpreter) runOperation(ctx context.Context, op Operation, tc *TestCase) ([]Result, error) {
	if op == OpRetain {
		if tc.DesiredObj == nil {
			return nil, errors.New("desired, desired-file options are not set")
		}
		if tc.ObservedObj == nil {
			return nil, errors.New("observed, observed-file options are not set")
		}
		retained, err := in.Retain(ctx, tc.DesiredObj, tc.ObservedObj)
		return []Result{{"retained", retained}}, err
	}
	obj, err := tc.object()
	if err != nil {
		return nil, err
	}
	switch op {
	case OpInterpretReplica:
		replicas, requires, err := in.GetReplicas(ctx, obj)
		return []Result{{"replica", replicas}, {"requires", requires}}, err
	case OpInterpretComponent:
		components, err := in.GetComponents(ctx, obj)
		return []Result{{"components", components}}, err
	case OpReviseReplica:
		revised, err := in.ReviseReplica(ctx, obj, tc.InputReplicas)
		return []Result{{"revised", revised}}, err
	case OpInterpretStatus:
		raw, err := in.ReflectStatusRaw(ctx, obj)
		return []Result{{"status", statusValue(raw)}}, err
	case OpAggregateStatus:
		aggregated, err := in.AggregateStatus(ctx, obj, tc.StatusItems)
		return []Result{{"aggregatedStatus", aggregated}}, err
	case OpInterpretHealth:
		healthy, err := in.InterpretHealth(ctx, obj)
		return []Result{{"healthy", healthy}}, err
	case OpInterpretDependency:
		deps, err := in.GetDependencies(ctx, obj)
		return []Result{{"dependencies", deps}}, err
	}
	return nil, fmt.Errorf("operation %s is not supported", op)
}

// runCase runs one case for customization c and compares its results;
// nil means it passed.
func runCase(ctx context.Context, in *Interpreter, c *Customization, tc *TestCase) *Failure {
	op, ok := operationByName(tc.Operation)
	if !ok {
		return &Failure{Message: fmt.Sprintf("operation %q is not supported; use one of: %s", tc.Operation, operationNames())}
	}
	// The harness first checks that c's own script for op compiles.
	if text := op.Script(&c.Spec.Customizations); text != "" {
		if _, err := luaapi.Compile("karmada:"+c.Name+"/"+op.Field(), text); err != nil {
			return &Failure{Operation: string(op), Message: fmt.Sprintf("checking %s of %s: %v", op, c.Name, err)}
		}
	}
	results, err := in.RunOperation(ctx, op, tc)
	if err != nil {
		if errors.Is(err, ErrNotEnabled) {
			err = errors.New("rule is not enabled")
		}
		return &Failure{Operation: string(op), Message: fmt.Sprintf("execute %s %s error: %v", c.Name, op, err)}
	}
	checked := map[string]bool{}
	for _, r := range results {
		expected, ok := tc.Output[r.Name]
		if !ok {
			continue // the harness only logs a result the test does not expect
		}
		checked[r.Name] = true
		cmp, err := compareOutput(expected, r.Value)
		if err != nil {
			return &Failure{Operation: string(op), Message: fmt.Sprintf("unexpected result for %s: %v", r.Name, err)}
		}
		if !cmp.equal {
			return &Failure{Operation: string(op), Message: "unexpected result for " + r.Name, Diff: textdiff.Unified(cmp.expected, cmp.actual)}
		}
	}
	var missing []string
	for key := range tc.Output {
		if !checked[key] {
			missing = append(missing, key)
		}
	}
	if len(missing) > 0 {
		return &Failure{Operation: string(op), Message: fmt.Sprintf("output key %s is defined but not present in actual results of %s", strings.Join(sortedStrings(missing), ", "), c.Name)}
	}
	return nil
}

// operationByName finds an operation by its name, ignoring case, as the
// harness's Rules.GetByOperation does (Lua function names are not
// operation names there).
func operationByName(name string) (Operation, bool) {
	for _, op := range Operations {
		if name != "" && strings.EqualFold(name, string(op)) {
			return op, true
		}
	}
	return "", false
}

func sortedStrings(s []string) []string {
	sort.Strings(s)
	return s
}

func operationNames() string {
	names := make([]string, len(Operations))
	for i, op := range Operations {
		names[i] = string(op)
	}
	return strings.Join(names, ", ")
}
