package object

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A revised document keeps the bytes of every line no revision touched:
// lists indented the kubectl way and the other way, comment spacing, flow
// mappings and the head comment.
func TestYAMLKeepsUntouchedLines(t *testing.T) {
	const in = `# written by hand
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: mnist   # the job
spec:
  replicaSpecs:
    Master:
      template:
        spec:
            containers:
                -   name: pytorch    # main
                    image: pytorch:2.4
                    args:
                    - --epochs=1
    Worker:
      labels: {team: ml}
      containers:
      - name: pytorch  # kubectl style
        image: pytorch:2.4
        env:
          - name: A     # indented style
            value: "1"
`
	for _, tc := range []struct {
		name string
		ops  []Op
		// want is in with these lines replaced (old -> new).
		replace [][2]string
	}{
		{"no revision", nil, nil},
		{"a scalar in a kubectl-style list",
			[]Op{{Op: "replace", Path: "/spec/replicaSpecs/Worker/containers/0/image", Value: "pytorch:2.5"}},
			[][2]string{{"style\n        image: pytorch:2.4\n", "style\n        image: pytorch:2.5\n"}}},
		{"keys added at two depths",
			[]Op{
				{Op: "add", Path: "/spec/replicaSpecs/Master/template/spec/containers/0/env", Value: []any{map[string]any{"name": "X", "value": "y"}}},
				{Op: "add", Path: "/spec/replicaSpecs/Master/template/spec/nodeSelector", Value: map[string]any{"gpu": "true"}},
			},
			[][2]string{{"                    - --epochs=1\n", "                    - --epochs=1\n                    env:\n                    - name: X\n                      value: \"y\"\n            nodeSelector:\n              gpu: \"true\"\n"}}},
		{"a key removed", []Op{{Op: "remove", Path: "/spec/replicaSpecs/Master/template/spec/containers/0/args"}},
			[][2]string{{"                    args:\n                    - --epochs=1\n", ""}}},
		{"a change in a flow mapping re-encodes its entry only",
			[]Op{{Op: "add", Path: "/spec/replicaSpecs/Worker/labels/tier", Value: "gpu"}},
			[][2]string{{"      labels: {team: ml}\n", "      labels: {team: ml, tier: gpu}\n"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs, err := Decode([]byte(in), "in.yaml")
			require.NoError(t, err)
			require.NoError(t, docs[0].ApplyToTree(tc.ops))
			want := in
			for _, r := range tc.replace {
				require.Contains(t, want, r[0])
				want = strings.Replace(want, r[0], r[1], 1)
			}
			got, err := docs[0].YAML()
			require.NoError(t, err)
			assert.Equal(t, want, string(got))
		})
	}
}

// Each document of several is spliced from its own lines.
func TestYAMLSplicesEachDocument(t *testing.T) {
	in := "a: 1   # one\nb:\n    - x\n---\n# second\na: 2\nb:\n- y\n"
	docs, err := Decode([]byte(in), "in.yaml")
	require.NoError(t, err)
	require.Len(t, docs, 2)
	require.NoError(t, docs[0].ApplyToTree([]Op{{Op: "replace", Path: "/b/0", Value: "z"}}))
	require.NoError(t, docs[1].ApplyToTree(nil))
	got, err := docs[0].YAML()
	require.NoError(t, err)
	assert.Equal(t, "a: 1   # one\nb:\n    - z\n", string(got))
	got, err = docs[1].YAML()
	require.NoError(t, err)
	assert.Equal(t, "# second\na: 2\nb:\n- y\n", string(got))
}
