package jqexpr

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAssignable(t *testing.T) {
	tests := []struct {
		expr   string
		reason string // "" when assignable
	}{
		// Assignable: the documented forms and the built-in Kartas' paths.
		{expr: "."},
		{expr: ".spec.pytorchReplicaSpecs.Worker.template"},
		{expr: ".spec.runPolicy.suspend"},
		{expr: `.metadata.annotations["serving.kserve.io/stop"]`},
		{expr: `.metadata.labels."training.kubeflow.org/replica-type"`},
		{expr: ".spec.replicatedJobs[]?.name"},
		{expr: ".spec.replicatedJobs[].template.spec.template"},
		{expr: ".spec.workerGroupSpecs[0].replicas"},
		{expr: ".spec.workerGroupSpecs[-1]"},
		{expr: ".spec.containers[1:3]"},
		{expr: ".spec.containers[:1][0]"},
		{expr: ".a?"},
		{expr: ".spec.services[]?.extraPodSpec.mainContainer"},
		{expr: ".spec.predictor | first((.model | select(. != null)), (.[]? | select(type == \"object\" and has(\"storageUri\"))), .model)"},
		{expr: ".spec.leaderWorkerTemplate | (.leaderTemplate // .workerTemplate)"},
		{expr: `select(.spec.mode == "cluster") | .spec.components.querynode.replicas`},
		{expr: ".spec.transformer | select(. != null) | .containers"},
		{expr: ".a, .b"},
		{expr: "(.a | .b), .c[]"},
		{expr: `getpath(["a","b"])`},
		{expr: `getpath(["a"]).b[0]`},
		{expr: "if .a then .b else .c end"},
		{expr: "if .a then .b elif .c then .d else .e end"},
		{expr: "if .a then .b end"},
		{expr: "empty"},
		{expr: ".[.key]"},
		{expr: `.["\(.name)"]`},
		{expr: ".[1 + 1]"},
		{expr: "(.a)?"},
		{expr: "first(.a[])"},
		{expr: ""},
		// A scalar literal after // is a default: the left side is written.
		{expr: ".x // 1"},
		{expr: ".spec.pytorchReplicaSpecs.Worker.replicas // 1"},
		{expr: ".a // .b // 0"},
		{expr: `.spec.replicatedJobs[]? | .replicas // 1`},
		{expr: ".a // null"},
		{expr: ".a // false"},

		// Not assignable.
		{expr: "1 // .x", reason: "literal 1 is not a path"},
		{expr: ".x // -1", reason: `unary "-" is not a path`},
		{expr: `.x // "\(.y)"`, reason: `literal "\(.y)" is not a path`},
		{expr: `.x // "1"`, reason: `literal "1" is not a path`},
		{expr: ".x // (1)", reason: "literal 1 is not a path"},
		{expr: ".x // 1 + 1", reason: `operator "+" is not a path`},
		{expr: ".a + 1", reason: `operator "+" is not a path`},
		{expr: "(.replicas // 1) * (.template.spec.parallelism // 1)", reason: `operator "*" is not a path`},
		{expr: "(.a) * (.b)", reason: `operator "*" is not a path`},
		{expr: ".a == 1", reason: `operator "==" is not a path`},
		{expr: ".a and .b", reason: `operator "and" is not a path`},
		{expr: "to_entries[]", reason: `function "to_entries/0" is not a path`},
		{expr: "keys[]", reason: `function "keys/0" is not a path`},
		{expr: ".spec.services // {} | keys[]", reason: "object construction is not a path"},
		{expr: `"x"`, reason: `literal "x" is not a path`},
		{expr: `.spec.transformer | select(. != null) | "transformer"`, reason: `literal "transformer" is not a path`},
		{expr: "null", reason: "literal null is not a path"},
		{expr: "true", reason: "literal true is not a path"},
		{expr: `.spec.image.repository + ":" + .spec.image.tag`, reason: `operator "+" is not a path`},
		{expr: "[.a]", reason: "array construction is not a path"},
		{expr: "{a: .a}", reason: "object construction is not a path"},
		{expr: "-.a", reason: `unary "-" is not a path`},
		{expr: "$__loc__", reason: `variable "$__loc__" is not a path`},
		{expr: "..", reason: `".." is not a path`},
		{expr: "try .a", reason: `"try" is not a path`},
		{expr: "reduce .[] as $x (.; .)", reason: `"reduce" is not a path`},
		{expr: "foreach .[] as $x (.; .)", reason: `"foreach" is not a path`},
		{expr: "label $f | .a", reason: `"label" is not a path`},
		{expr: "@base64", reason: `format "@base64" is not a path`},
		{expr: "first", reason: `function "first/0" is not a path`},
		{expr: "first(.a + 1)", reason: `operator "+" is not a path`},
		{expr: "if .a then .b else 1 end", reason: "literal 1 is not a path"},
		{expr: "if .a then .b elif .c then 2 else .d end", reason: "literal 2 is not a path"},
		{expr: "if .a then 0 else .c end", reason: "literal 0 is not a path"},
		{expr: ".a, 1", reason: "literal 1 is not a path"},
		{expr: "1 | .a", reason: "literal 1 is not a path"},
		{expr: ". as $x | .a", reason: `variable binding "as" is not a path`},
		{expr: "def f: .a; f", reason: `function definition "f/0" is not a path`},
		{expr: ".a |= 1", reason: `assignment "|=" is not a path`},
		{expr: `"a very long string literal that goes on and on and on"`, reason: `literal "a very long string literal that goes o… is not a path`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			a, _ := Check(tt.expr)
			require.NotNil(t, a.Query)
			ok, reason := Assignable(a.Query)
			assert.Equal(t, tt.reason, reason)
			assert.Equal(t, tt.reason == "", ok)
		})
	}
}

func TestAssignableNil(t *testing.T) {
	ok, reason := Assignable(nil)
	assert.False(t, ok)
	assert.Equal(t, "an empty expression is not a path", reason)
}
