package perf

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// BenchmarkJQMeter is what metering costs gojq (issue 12): the same
// programs on the same object, run plain and under a Budget that charges
// every instruction and every builtin's work and allocation. Expressions
// that run on gojq in the built-ins (untranslated) and heavier ones; the
// outputs are asserted equal before timing. "context" is a cancellable
// context without a meter: what a call's context cost before metering.
func BenchmarkJQMeter(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "jobset", "running.yaml"))
	require.NoError(b, err)
	raw, err := yaml.YAMLToJSON(data)
	require.NoError(b, err)
	var obj any
	require.NoError(b, json.Unmarshal(raw, &obj))
	for _, tc := range []struct{ name, expr string }{
		{"any", `any(.status.conditions[]?; .type == "Completed" and .status == "True")`},
		{"map-select", `[.spec.replicatedJobs[] | select(.replicas > 0) | .name] | length`},
		{"tojson", `.spec | tojson | length`},
		{"sort-group", `[.spec.replicatedJobs[].template.spec.template.spec.containers[].name] | sort | group_by(.) | length`},
		{"reduce", `reduce .spec.replicatedJobs[] as $j (0; . + ($j.replicas // 1))`},
	} {
		q, err := gojq.Parse(tc.expr)
		require.NoError(b, err)
		code, err := gojq.Compile(q)
		require.NoError(b, err)
		eval := func(ctx context.Context) any {
			v, ok := code.RunWithContext(ctx, obj).Next()
			require.True(b, ok)
			if e, isErr := v.(error); isErr {
				b.Fatal(e)
			}
			return v
		}
		budget := func() context.Context { return gojq.NewBudget(context.Background(), 1<<40, 1<<40) }
		require.Equal(b, eval(context.Background()), eval(budget()), tc.expr)
		b.Run(tc.name+"/plain", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				eval(context.Background())
			}
		})
		// What a call's context cost gojq before metering: a select per
		// instruction on a cancellable context.
		cctx, cancel := context.WithCancel(context.Background())
		b.Run(tc.name+"/context", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				eval(cctx)
			}
		})
		cancel()
		b.Run(tc.name+"/metered", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				eval(budget())
			}
		})
	}
}
