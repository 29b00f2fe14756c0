package interpreter_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"testing"

	"github.com/itchyny/gojq"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// An oracle for the scale conversion of GetPodSpecs on hostile objects:
// gojq runs each scale path of the Karta on the mutated object,
// independently of the interpreter. A path can turn a hostile value into a
// valid one (RayCluster clamps replicas to maxReplicas), so the mutation
// alone says nothing; the path's outputs do. When one of them is not a
// valid replica count (2.5, "NaN", 1e300, a negative number) GetPodSpecs
// must fail; when it succeeds, each number it reports is one the path
// yields, so that nothing was truncated or rounded.

// scaleExpr is one scale path of a component, compiled with gojq.
type scaleExpr struct {
	comp, field, expr string
	code              *gojq.Code
	// vars are the values of the Karta's references the hooks see here,
	// with no resolver: null for a lookup, [] for a list.
	vars []any
}

func scaleExprs(t *testing.T, k *karta.Karta) []scaleExpr {
	t.Helper()
	var out []scaleExpr
	var absent []any
	for _, r := range k.Spec.References {
		if r.List != nil {
			absent = append(absent, []any{})
		} else {
			absent = append(absent, nil)
		}
	}
	for _, c := range k.Spec.StructureDefinition.Components() {
		sd := c.ScaleDefinition
		if sd == nil {
			continue
		}
		for _, f := range []struct{ field, expr string }{
			{"replicas", sd.ReplicasPath}, {"minReplicas", sd.MinReplicasPath}, {"maxReplicas", sd.MaxReplicasPath},
		} {
			if f.expr == "" {
				continue
			}
			q, err := gojq.Parse(f.expr)
			require.NoError(t, err, "component %s %s", c.Name, f.field)
			code, err := gojq.Compile(q, gojq.WithVariables(k.Spec.Variables()))
			require.NoError(t, err, "component %s %s", c.Name, f.field)
			out = append(out, scaleExpr{comp: c.Name, field: f.field, expr: f.expr, code: code, vars: absent})
		}
	}
	return out
}

// checkScales checks a GetPodSpecs result (nil when it failed) against
// the oracle.
func (c *hostileCase) checkScales(t *testing.T, where string, obj map[string]any, specs *interpreter.PodSpecs) {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		return // NaN or ±Inf: not JSON, no jq input
	}
	var in any
	require.NoError(t, json.Unmarshal(data, &in))
	for _, e := range c.scales {
		valid := map[int64]bool{}
		var bad []string
		iter := e.code.Run(in, e.vars...)
		for {
			v, ok := iter.Next()
			if !ok {
				break
			}
			if jqErr, ok := v.(error); ok {
				bad = append(bad, "jq error: "+jqErr.Error())
				break
			}
			n, ok := replicaCount(v)
			switch {
			case !ok:
				b, _ := json.Marshal(v)
				bad = append(bad, string(b))
			case n != nil:
				valid[*n] = true
			}
		}
		if specs == nil {
			continue
		}
		if len(bad) > 0 && c.present(specs, e.comp) {
			t.Errorf("%s: GetPodSpecs succeeded though the %s path of component %q yields %v (an invalid scale value: an error)", where, e.field, e.comp, bad)
		}
		for _, it := range specs.Items {
			if it.Component != e.comp || it.Scale == nil {
				continue
			}
			got := map[string]*int64{"replicas": it.Scale.Replicas, "minReplicas": it.Scale.MinReplicas, "maxReplicas": it.Scale.MaxReplicas}[e.field]
			if got != nil && !valid[*got] {
				t.Errorf("%s: GetPodSpecs: %s/%s %s is %d, which %s does not yield (it yields %v, invalid %v): truncated or rounded?", where, it.Component, it.Instance, e.field, *got, e.expr, listInts(valid), bad)
			}
		}
	}
}

// present reports whether the result has an item of component comp: an
// absent instance (a null template) yields no item, and its scale is not
// read.
func (c *hostileCase) present(specs *interpreter.PodSpecs, comp string) bool {
	for _, it := range specs.Items {
		if it.Component == comp {
			return true
		}
	}
	return false
}

// replicaCount is the scale conversion, written from its rule: null is no
// value; an integral number or a string of ASCII decimal digits with an
// optional sign is that integer, valid within 0…2147483647; anything else
// is invalid.
func replicaCount(v any) (*int64, bool) {
	var f float64
	switch x := v.(type) {
	case nil:
		return nil, true
	case int:
		f = float64(x)
	case float64:
		f = x
	case *big.Int:
		return nil, false // beyond int64: out of range
	case string:
		digits := x
		if digits != "" && (digits[0] == '+' || digits[0] == '-') {
			digits = digits[1:]
		}
		if digits == "" {
			return nil, false
		}
		for i := 0; i < len(digits); i++ {
			if digits[i] < '0' || digits[i] > '9' {
				return nil, false
			}
		}
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return nil, false
		}
		f = float64(n)
	default:
		return nil, false
	}
	if f != math.Trunc(f) || f < 0 || f > math.MaxInt32 {
		return nil, false
	}
	n := int64(f)
	return &n, true
}

func listInts(m map[int64]bool) string {
	return fmt.Sprint(slices.Sorted(maps.Keys(m)))
}
