package builtin_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/internal/jqvalue"
	"github.com/kartalua/karta/internal/third_party/gojq"
	"github.com/kartalua/karta/karta"
)

// Expressions of the built-ins rewritten to compute less on every call
// (docs/performance.md, "Fifth round") answer as their former text did:
// the same outputs, or the same error, on the examples' shapes and on
// odd ones. gojq, the oracle every back end and export is held to, runs
// both. AppWrapper's podSet paths: every shape the split tells apart (no
// "[", an index, an empty key, an unclosed or doubled bracket, a path that
// is not a string), under each of the three expressions that split them.

// appWrapperSplitBefore is how AppWrapper's podSet paths were split: every
// key split again at "[", an array per key on every call.
const appWrapperSplitBefore = `s: [.p.path | split(".")[] | split("[") | .[0], (.[1:][] | rtrimstr("]") | tonumber)]}`

// appWrapperSplitAfter splits a key again only when some key has a "[" or
// is empty.
const appWrapperSplitAfter = `s: (.p.path | split(".") | if ([.[] | select(. == "" or (split("[") | .[0]) != .)] | length) > 0 then map(split("[") | .[0], (.[1:][] | rtrimstr("]") | tonumber)) else . end)}`

func TestRewrittenPathsAnswerAsBefore(t *testing.T) {
	aw := builtinKarta(t, "appwrapper")
	podset := aw.Spec.StructureDefinition.ChildComponents[0]

	// A podSet path of every shape the split tells apart.
	paths := []string{`"template"`, `"template.spec.template"`, `"template.spec.pytorchReplicaSpecs.Worker.template"`,
		`"template.spec.replicatedJobs[1].template.spec.template"`, `"template.spec.workerGroupSpecs[0].template"`,
		`"template.spec..template"`, `""`, `"."`, `"template[x]"`, `"a[0]b"`, `"a]"`, `"a[[1]]"`, `"[0]"`,
		`null`, `3`, `["template"]`}
	var awObjects []string
	for _, p := range paths {
		awObjects = append(awObjects, `{"spec": {"components": [{"template": {"metadata": {"name": "w"},
			"spec": {"template": {"spec": {}}, "replicatedJobs": [{"name": "a"}, {"name": "b", "template": {"spec": {"template": {}}}}],
			"pytorchReplicaSpecs": {"Worker": {"template": {}}}, "workerGroupSpecs": [{"groupName": "g", "template": {}}]}},
			"podSets": [{"path": `+p+`, "replicas": 2}]}]}}`)
	}
	awObjects = append(awObjects, `{}`, `{"spec": {"components": []}}`, `{"spec": {"components": "x"}}`,
		`{"spec": {"components": [{"template": {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {}}}}]}}`)

	tests := []struct {
		name    string
		after   string
		objects []string
	}{
		{"appwrapper instanceIdPath", podset.InstanceIDPath, awObjects},
		{"appwrapper podTemplateSpecPath", podset.SpecDefinition.PodTemplateSpecPath, awObjects},
		{"appwrapper replicasPath", podset.ScaleDefinition.ReplicasPath, awObjects},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, tt.after, appWrapperSplitAfter)
			before := strings.ReplaceAll(tt.after, appWrapperSplitAfter, appWrapperSplitBefore)
			for _, text := range tt.objects {
				var obj any
				require.NoError(t, yaml.Unmarshal([]byte(text), &obj), text)
				wantOuts, wantErr := runGojq(t, before, obj)
				gotOuts, gotErr := runGojq(t, tt.after, obj)
				assert.Equal(t, wantErr, gotErr, "error on %s", text)
				assert.Equal(t, wantOuts, gotOuts, "outputs on %s", text)
			}
		})
	}
}

// builtinKarta is the named built-in's Karta.
func builtinKarta(t *testing.T, name string) *karta.Karta {
	t.Helper()
	b, ok, err := builtin.Get(name)
	require.NoError(t, err)
	require.True(t, ok, name)
	return b.Karta
}

// runGojq is expr's outputs on in up to its first error, and that error's
// text ("" for none).
func runGojq(t *testing.T, expr string, in any) ([]any, string) {
	t.Helper()
	q, err := gojq.Parse(expr)
	require.NoError(t, err, expr)
	code, err := gojq.Compile(q)
	require.NoError(t, err, expr)
	var outs []any
	it := code.Run(jqvalue.Input(in))
	for {
		v, ok := it.Next()
		if !ok {
			return outs, ""
		}
		if err, isErr := v.(error); isErr {
			return outs, err.Error()
		}
		outs = append(outs, v)
	}
}
