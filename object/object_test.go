package object

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const pytorchJob = `# a comment that survives
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: train
  namespace: ml
spec:
  runPolicy: {cleanPodPolicy: None}
  pytorchReplicaSpecs:
    Worker:
      replicas: 3
      template:
        spec:
          containers:
          - name: pytorch
            image: pytorch:2.4
            resources:
              limits: {nvidia.com/gpu: 1, memory: 1.5Gi, cpu: 1.0}
`

func TestDecodeKeepsNumberLiterals(t *testing.T) {
	docs, err := Decode([]byte(pytorchJob), "job.yaml")
	require.NoError(t, err)
	require.Len(t, docs, 1)
	limits := docs[0].Object["spec"].(map[string]any)["pytorchReplicaSpecs"].(map[string]any)["Worker"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["resources"].(map[string]any)["limits"].(map[string]any)
	assert.Equal(t, json.Number("1.0"), limits["cpu"])
	assert.Equal(t, json.Number("1"), limits["nvidia.com/gpu"])
	assert.Equal(t, "1.5Gi", limits["memory"])
}

func TestDecodeDocuments(t *testing.T) {
	in := "---\n# empty\n---\n{\"kind\": \"Pod\", \"n\": 12345678901234567890}\n---\nkind: Pod\nx: 0x10\ny: 1_000\n---\n"
	docs, err := Decode([]byte(in), "pods.yaml")
	require.NoError(t, err)
	require.Len(t, docs, 2)
	assert.Equal(t, 1, docs[0].Index)
	assert.Equal(t, json.Number("12345678901234567890"), docs[0].Object["n"], "big integers keep their digits")
	assert.Equal(t, json.Number("16"), docs[1].Object["x"])
	assert.Equal(t, json.Number("1000"), docs[1].Object["y"])
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", "x.yaml: no object found (the input is empty)"},
		{"- a\n- b\n", "x.yaml:1: expected an object, got a list"},
		{"a: [1, 2\n", "x.yaml:2: invalid YAML: did not find expected ',' or ']'"},
		{"a: \xff\n", "x.yaml:1: input is not valid UTF-8 (byte offset 3); save the file as UTF-8"},
		{"a: 1\n---\n? [a]\n: 1\n", "x.yaml:3: document 2: a map key must be a string"},
		{"a: &x {b: 1}\nc:\n  <<: *x\n", "x.yaml:3: YAML merge keys (<<) are not supported"},
		{"spec:\n  replicas: 3\n  template: {}\n  replicas: 7\n", "x.yaml:4: duplicate key \"replicas\" (first at line 2)"},
		{`{"kind": "Pod", "metadata": {"name": "a", "name": "b"}}`, "x.yaml:1: duplicate key \"name\" (first at line 1)"},
		{"a: .inf\n", "x.yaml:1: .inf is not a JSON number"},
		{"a: 1\n---\nb: [1, 2\n", "x.yaml:3: document 2: invalid YAML: did not find expected ',' or ']'"},
		{"a: [1, 2\n---\nb: 1\n", "x.yaml:2: document 1: invalid YAML: did not find expected ',' or ']'"},
		{"a: 1\n---\n- b\n", "x.yaml:3: document 2: expected an object, got a list"},
		{strings.Repeat("[", 300) + strings.Repeat("]", 300), ""},
	}
	for _, tc := range cases {
		_, err := Decode([]byte(tc.in), "x.yaml")
		require.Error(t, err, "%q", tc.in)
		if tc.want != "" {
			assert.Equal(t, tc.want, err.Error())
		}
	}
	deep := "a: " + strings.Repeat("{b: ", 250) + "1" + strings.Repeat("}", 250) + "\n"
	_, err := Decode([]byte(deep), "x.yaml")
	assert.ErrorContains(t, err, "nesting deeper than 200 levels")
}

func TestApplyToTreeKeepsOrderAndSpelling(t *testing.T) {
	docs, err := Decode([]byte(pytorchJob), "job.yaml")
	require.NoError(t, err)
	d := docs[0]
	require.NoError(t, d.ApplyToTree([]Op{
		{Op: "add", Path: "/spec/runPolicy/suspend", Value: true},
		{Op: "replace", Path: "/spec/pytorchReplicaSpecs/Worker/replicas", Value: json.Number("5")},
		{Op: "add", Path: "/spec/pytorchReplicaSpecs/Worker/template/metadata", Value: map[string]any{"labels": map[string]any{"team": "a", "a/b": "c"}}},
		{Op: "remove", Path: "/metadata/namespace"},
		{Op: "replace", Path: "/spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/image", Value: "pytorch:2.5"},
	}))
	y, err := d.YAML()
	require.NoError(t, err)
	assert.Equal(t, `# a comment that survives
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: train
spec:
  runPolicy: {cleanPodPolicy: None, suspend: true}
  pytorchReplicaSpecs:
    Worker:
      replicas: 5
      template:
        spec:
          containers:
          - name: pytorch
            image: pytorch:2.5
            resources:
              limits: {nvidia.com/gpu: 1, memory: 1.5Gi, cpu: 1.0}
        metadata:
          labels:
            a/b: c
            team: a
`, string(y))
	j, err := d.JSON()
	require.NoError(t, err)
	assert.True(t, json.Valid(j))
	assert.Regexp(t, `"limits": \{\s+"nvidia.com/gpu": 1,\s+"memory": "1.5Gi",\s+"cpu": 1.0\s+\}`, string(j))
	assert.Less(t, strings.Index(string(j), `"apiVersion"`), strings.Index(string(j), `"kind"`), "key order is kept")
}

func TestApplyToTreeErrors(t *testing.T) {
	docs, err := Decode([]byte(pytorchJob), "job.yaml")
	require.NoError(t, err)
	for _, tc := range []struct {
		op   Op
		want string
	}{
		{Op{Op: "replace", Path: "/spec/nope", Value: 1}, `replace /spec/nope: no key "nope" to replace`},
		{Op{Op: "remove", Path: "/spec/nope"}, `remove /spec/nope: no key "nope" to remove`},
		{Op{Op: "add", Path: "/spec/a/b", Value: 1}, `add /spec/a/b: no key "a"`},
		{Op{Op: "replace", Path: "/spec/pytorchReplicaSpecs/Worker/template/spec/containers/3", Value: 1}, `replace /spec/pytorchReplicaSpecs/Worker/template/spec/containers/3: no index "3" in a list of 1`},
		{Op{Op: "move", Path: "/spec"}, `move /spec: unsupported operation "move"`},
		{Op{Op: "add", Path: "spec"}, `add spec: invalid JSON pointer "spec"`},
	} {
		assert.EqualError(t, docs[0].ApplyToTree([]Op{tc.op}), tc.want)
	}
}

func TestItemsExpandsLists(t *testing.T) {
	in := "apiVersion: v1\nkind: PodList\nitems:\n- {kind: Pod, metadata: {name: a}}\n- {kind: Pod, metadata: {name: b}}\n---\nkind: Pod\nmetadata: {name: c}\n"
	docs, err := Decode([]byte(in), "pods.yaml")
	require.NoError(t, err)
	items := Items(docs)
	require.Len(t, items, 3)
	for i, name := range []string{"a", "b", "c"} {
		assert.Equal(t, name, items[i]["metadata"].(map[string]any)["name"])
	}
}

// A value written over an existing one keeps the old nodes of what it
// repeats: the elements of a list replaced to add or drop one, the keys of
// an object replaced to change one.
func TestApplyToTreeGraftsOverOldValues(t *testing.T) {
	const in = `spec:
  containers:
  - name: trainer # the main one
    image: pytorch:2.4
    env:
    - {name: HF_HOME, value: /cache}
    - {name: WORLD_SIZE, value: "8"}
    resources:
      limits: {nvidia.com/gpu: 1, cpu: 1.0}
  volumes: [{name: cache, emptyDir: {}}]
`
	env := func(kv ...string) []any {
		var out []any
		for i := 0; i < len(kv); i += 2 {
			out = append(out, map[string]any{"name": kv[i], "value": kv[i+1]})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		op   Op
		want string
	}{{
		name: "an element added before the others",
		op:   Op{Op: "replace", Path: "/spec/containers/0/env", Value: env("NCCL_DEBUG", "INFO", "HF_HOME", "/cache", "WORLD_SIZE", "8")},
		want: `spec:
  containers:
  - name: trainer # the main one
    image: pytorch:2.4
    env:
    - {name: NCCL_DEBUG, value: INFO}
    - {name: HF_HOME, value: /cache}
    - {name: WORLD_SIZE, value: "8"}
    resources:
      limits: {nvidia.com/gpu: 1, cpu: 1.0}
  volumes: [{name: cache, emptyDir: {}}]
`,
	}, {
		name: "an element dropped",
		op:   Op{Op: "replace", Path: "/spec/containers/0/env", Value: env("WORLD_SIZE", "8")},
		want: `spec:
  containers:
  - name: trainer # the main one
    image: pytorch:2.4
    env:
    - {name: WORLD_SIZE, value: "8"}
    resources:
      limits: {nvidia.com/gpu: 1, cpu: 1.0}
  volumes: [{name: cache, emptyDir: {}}]
`,
	}, {
		name: "an object replaced keeps its key order and comments, new keys last",
		op: Op{Op: "replace", Path: "/spec/containers/0", Value: map[string]any{
			"resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": json.Number("2"), "cpu": json.Number("1.0")}},
			"name":      "trainer", "image": "pytorch:2.5", "args": []any{"--epochs=3"},
			"env": env("HF_HOME", "/cache", "WORLD_SIZE", "8"),
		}},
		want: `spec:
  containers:
  - name: trainer # the main one
    image: pytorch:2.5
    env:
    - {name: HF_HOME, value: /cache}
    - {name: WORLD_SIZE, value: "8"}
    resources:
      limits: {nvidia.com/gpu: 2, cpu: 1.0}
    args:
    - --epochs=3
  volumes: [{name: cache, emptyDir: {}}]
`,
	}, {
		name: "a number spelled anew is a new node, an equal one is the old",
		op: Op{Op: "replace", Path: "/spec/containers/0/resources/limits", Value: map[string]any{
			"nvidia.com/gpu": int64(1), "cpu": json.Number("1"),
		}},
		want: `spec:
  containers:
  - name: trainer # the main one
    image: pytorch:2.4
    env:
    - {name: HF_HOME, value: /cache}
    - {name: WORLD_SIZE, value: "8"}
    resources:
      limits: {nvidia.com/gpu: 1, cpu: 1}
  volumes: [{name: cache, emptyDir: {}}]
`,
	}, {
		name: "a new element takes its siblings' style and key order",
		op: Op{Op: "replace", Path: "/spec/volumes", Value: []any{
			map[string]any{"name": "cache", "emptyDir": map[string]any{}},
			map[string]any{"persistentVolumeClaim": map[string]any{"claimName": "ckpt"}, "name": "checkpoints"},
		}},
		want: `spec:
  containers:
  - name: trainer # the main one
    image: pytorch:2.4
    env:
    - {name: HF_HOME, value: /cache}
    - {name: WORLD_SIZE, value: "8"}
    resources:
      limits: {nvidia.com/gpu: 1, cpu: 1.0}
  volumes: [{name: cache, emptyDir: {}}, {name: checkpoints, persistentVolumeClaim: {claimName: ckpt}}]
`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			docs, err := Decode([]byte(in), "pod.yaml")
			require.NoError(t, err)
			require.NoError(t, docs[0].ApplyToTree([]Op{tc.op}))
			y, err := docs[0].YAML()
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(y))
		})
	}
}

// kubectl get -o yaml prints a v1 List: Expand takes it item by item, each
// item rendering and patching from its own part of the input.
func TestExpandList(t *testing.T) {
	in := `apiVersion: v1
kind: List
items:
- apiVersion: kubeflow.org/v1
  kind: PyTorchJob
  metadata: {name: a}   # first
  spec: {x: 1}
- apiVersion: kubeflow.org/v1
  kind: PyTorchJob
  metadata: {name: b}
  spec: {x: 2.50}
metadata:
  resourceVersion: ""
---
apiVersion: v1
kind: Pod
metadata: {name: p}
`
	docs, err := Decode([]byte(in), "list.yaml")
	require.NoError(t, err)
	require.Len(t, docs, 2)
	items := Expand(docs)
	require.Len(t, items, 3)
	assert.Equal(t, []int{1, 1, 2}, []int{items[0].Index, items[1].Index, items[2].Index})
	assert.Equal(t, []int{1, 2, 0}, []int{items[0].Item, items[1].Item, items[2].Item})
	assert.Equal(t, []int{4, 8, 15}, []int{items[0].Line, items[1].Line, items[2].Line})
	assert.Same(t, docs[1], items[2], "a document that is not a List is itself")

	y, err := items[1].YAML()
	require.NoError(t, err)
	assert.Equal(t, "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: b}\nspec: {x: 2.50}\n", string(y))
	require.NoError(t, items[0].ApplyToTree([]Op{{Op: "replace", Path: "/spec/x", Value: json.Number("3")}}))
	y, err = items[0].YAML()
	require.NoError(t, err)
	assert.Equal(t, "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: a} # first\nspec: {x: 3}\n", string(y))

	assert.Len(t, Items(docs), 3)
	assert.True(t, isList(docs[0].Object))
	assert.False(t, isList(map[string]any{"kind": "List"}), "a List has items")
}
