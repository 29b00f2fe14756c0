package interpreter

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	upstream "github.com/itchyny/gojq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/internal/jqvalue"
	"github.com/kartalua/karta/internal/jqvars"
)

// referenceExprs read $runtime (a lookup) and $pods (a list), or neither,
// on every back end; errors included.
var referenceExprs = []string{
	`$runtime.spec.template.spec.containers[0].image`,
	`$runtime | .metadata.name // "none"`,
	`[$pods[] | .metadata.name]`,
	`$pods | map(select(.status.phase == "Running")) | length`,
	`[$pods[].status.phase] | join(",")`,
	`.spec.replicas - ($pods | length)`,
	`if $runtime == null then "absent" else $runtime.kind end`,
	`$pods[0].metadata.labels.app + "-" + .metadata.name`,
	`$runtime.spec.template.spec.containers[] | .name`,
	`$pods | .[] | .status.phase | ascii_downcase`,
	`{n: ($pods | length), r: ($runtime != null)}`,
	`$runtime.spec | tonumber`,         // an error: an object is not a number
	`$pods[] | .metadata.name | . + 1`, // an error per output
	`.spec.replicas * 2`,               // no variable: still direct
}

// outcomeOf reduces outputs or an error to comparable strings: a
// *JQError's cause, as the oracle reports it.
func outcomeOf(outs []any, err error) backendOutcome {
	if err != nil {
		var je *JQError
		if errors.As(err, &je) {
			err = je.Err
		}
		return backendOutcome{err: err.Error()}
	}
	var o backendOutcome
	for _, v := range outs {
		o.outputs = append(o.outputs, canonicalJSON(jqvalue.Output(v)))
	}
	return o
}

// TestReferencesDifferential runs each expression, with the references
// bound, on upstream gojq (the oracle, variables passed directly), the
// fork through the context (jqvars), the evaluator of a script's
// karta.generated call (inside a pooled state's call) and the direct evaluator
// (the values in its Scratch), which must give the oracle's outputs
// without declining, and decline where the oracle fails (its exact back
// end, gojq, then gives the oracle's error).
func TestReferencesDifferential(t *testing.T) {
	var matchers []string
	for _, e := range referenceExprs {
		b, err := json.Marshal(e) // a JSON string is a YAML one
		require.NoError(t, err)
		matchers = append(matchers, "          - byExpression: {expression: "+string(b)+", expectedResult: x}")
	}
	text := strings.Replace(refsKarta, "          initializing:\n", strings.Join(matchers, "\n")+"\n          initializing:\n", 1)
	p, err := Compile(progKarta(t, text), Options{})
	require.NoError(t, err)

	objsets := map[string][]string{
		"resolved": {"runtime", "w-0 Running", "w-1 Pending"},
		"absent":   nil,
	}
	for set, names := range objsets {
		resolver := NewStaticResolver()
		if names != nil {
			objs := refsObjects(t, names)
			resolver = NewStaticResolver(objs...)
		}
		obj := refsWorkload(t, "torch")
		ctx, err := p.bindReferences(WithResolver(context.Background(), resolver, nil), HookInterpretStatus, obj)
		require.NoError(t, err)
		vals := jqvars.From(ctx)
		require.Len(t, vals, 2)
		for _, expr := range referenceExprs {
			t.Run(set+"/"+expr, func(t *testing.T) {
				prog, err := p.model.exprs.compile(expr)
				require.NoError(t, err)

				q, err := upstream.Parse(expr)
				require.NoError(t, err)
				code, err := upstream.Compile(q, upstream.WithVariables([]string{"$runtime", "$pods"}))
				require.NoError(t, err)
				oracle := iterOutcome(ctx, code.RunWithContext(ctx, gojqForm(jqvalue.Input(obj.Object)), gojqForm(vals[0]), gojqForm(vals[1])).Next)

				fork := outcomeOf(gojqEvaluator{}.all(ctx, prog, obj.Object))
				assert.Equal(t, oracle.outputs, fork.outputs, "fork")
				assert.Equal(t, oracle.err, fork.err, "fork")

				var inScript backendOutcome
				_, err = p.inScriptCall(ctx, HookInterpretStatus, func(ctx context.Context, ev evaluator) (any, error) {
					inScript = outcomeOf(ev.all(ctx, prog, obj.Object))
					return nil, nil
				})
				require.NoError(t, err)
				assert.Equal(t, oracle.outputs, inScript.outputs, "in a script's call")
				assert.Equal(t, oracle.err, inScript.err, "in a script's call")

				dev := p.newEvaluator(ctx, nil)
				d := outcomeOf(dev.all(ctx, prog, obj.Object))
				if oracle.err != "" {
					assert.True(t, dev.declined, "direct: an error is the exact back end's to report")
				} else {
					assert.False(t, dev.declined, "direct: references are read directly")
				}
				assert.Equal(t, oracle.outputs, d.outputs, "direct")
				assert.Equal(t, oracle.err, d.err, "direct")
				require.NoError(t, dev.finish(nil))
			})
		}
	}
}

// refsObjects builds the named objects: "runtime", or "POD PHASE".
func refsObjects(t testing.TB, names []string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, n := range names {
		if n == "runtime" {
			out = append(out, refsRuntime(t))
			continue
		}
		name, phase, _ := strings.Cut(n, " ")
		out = append(out, refsPod(t, name, "ns", "w", "u-1", phase))
	}
	return out
}
