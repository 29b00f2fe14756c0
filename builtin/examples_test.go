package builtin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
)

var update = flag.Bool("update", false, "rewrite the golden outputs of the examples (make golden)")

// Files of an example folder that are not workload objects in some state.
var notStates = map[string]bool{"pods.yaml": true, "revisions.yaml": true}

// TestExamples runs every built-in on every example of it, as
// `karta status|pods -f STATE.yaml`, `karta gang -f running.yaml --pods
// pods.yaml` and `karta revise -f running.yaml -r revisions.yaml -o patch`
// would, and compares with examples/<name>/golden/. The Karta is found by
// the object's GVK, as the CLI does without -k. Regenerate with `make
// golden` and review the diff.
func TestExamples(t *testing.T) {
	reg, err := builtin.Registry(interpreter.Options{})
	require.NoError(t, err)
	names := builtin.Names()
	require.NotEmpty(t, names)
	for _, name := range names {
		dir := filepath.Join("..", "examples", name)
		t.Run(name, func(t *testing.T) {
			states, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
			require.NoError(t, err)
			var objects []string
			for _, s := range states {
				if !notStates[filepath.Base(s)] {
					objects = append(objects, s)
				}
			}
			require.NotEmpty(t, objects, "every built-in ships examples in %s", dir)
			sort.Strings(objects)
			for _, file := range objects {
				state := strings.TrimSuffix(filepath.Base(file), ".yaml")
				obj := loadObject(t, file)
				p, ok := reg.Get(obj.GroupVersionKind())
				require.True(t, ok, "%s: no built-in for %s", file, obj.GroupVersionKind())
				require.Equal(t, name, p.Name(), "%s is found by its GVK", file)
				ctx := context.Background()
				status, err := p.InterpretStatus(ctx, obj)
				checkGolden(t, dir, state+".status", status, err)
				pods, err := p.GetPodSpecs(ctx, obj)
				checkGolden(t, dir, state+".pods", pods, err)
				if state == "running" {
					if podsFile := filepath.Join(dir, "pods.yaml"); exists(podsFile) {
						gang, err := p.GetGangGroups(ctx, obj, loadPods(t, podsFile))
						checkGolden(t, dir, state+".gang", gang, err)
					}
					if revFile := filepath.Join(dir, "revisions.yaml"); exists(revFile) {
						revs := loadRevisions(t, revFile)
						var patch any
						res, err := p.ReviseSpec(ctx, obj, revs)
						if err == nil {
							patch = res.Patch
						}
						checkGolden(t, dir, state+".revise-patch", patch, err)
					}
				}
			}
		})
	}
}

// checkGolden compares a result (as the CLI's -o json prints it) or an
// error with golden/<name>.json or golden/<name>.error.
func checkGolden(t *testing.T, dir, name string, v any, err error) {
	t.Helper()
	var got []byte
	file := filepath.Join(dir, "golden", name+".json")
	if err != nil {
		file = filepath.Join(dir, "golden", name+".error")
		got = []byte(err.Error() + "\n")
	} else {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(v))
		got = buf.Bytes()
	}
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
		for _, ext := range []string{".json", ".error"} {
			_ = os.Remove(filepath.Join(dir, "golden", name+ext))
		}
		require.NoError(t, os.WriteFile(file, got, 0o644))
		return
	}
	want, rerr := os.ReadFile(file)
	require.NoError(t, rerr, "missing golden %s: run make golden and review it", file)
	assert.Equal(t, string(want), string(got), "%s", file)
}

func loadObject(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	docs, err := object.Decode(data, file)
	require.NoError(t, err)
	require.Len(t, docs, 1, "%s: one object per state file", file)
	return &unstructured.Unstructured{Object: docs[0].Object}
}

func loadPods(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	docs, err := object.Decode(data, file)
	require.NoError(t, err)
	var pods []*unstructured.Unstructured
	for _, it := range object.Items(docs) {
		pod := &unstructured.Unstructured{Object: it}
		require.Equal(t, schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, pod.GroupVersionKind(), "%s holds Pods", file)
		pods = append(pods, pod)
	}
	return pods
}

func loadRevisions(t *testing.T, file string) []interpreter.Revision {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	v, err := object.DecodeValue(data)
	require.NoError(t, err)
	revs, err := interpreter.DecodeRevisions(v)
	require.NoError(t, err)
	return revs
}

func exists(file string) bool {
	_, err := os.Stat(file)
	return err == nil
}
