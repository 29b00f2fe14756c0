package builtin_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/internal/kartatest"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
)

var update = flag.Bool("update", false, "rewrite the golden outputs of the examples (make golden)")

// Files of an example folder that are not workload objects in some state.
var notStates = map[string]bool{"pods.yaml": true, "revisions.yaml": true, kartatest.FileName: true}

// TestExamples runs `karta test` on every built-in's example folder
// (examples/<name>/karta_test.yaml: status and pod definitions of every
// state, gangs and revisions of running.yaml, against the goldens in
// golden/), and checks that each state file's kind finds that built-in,
// as the CLI finds it without -k. Regenerate with `make golden` and review
// the diff.
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
				obj := loadObject(t, file)
				p, ok := reg.Get(obj.GroupVersionKind())
				require.True(t, ok, "%s: no built-in for %s", file, obj.GroupVersionKind())
				require.Equal(t, name, p.Name(), "%s is found by its GVK", file)
			}
			require.FileExists(t, filepath.Join(dir, kartatest.FileName), "every example folder has its karta test (hack/example-tests.sh writes one)")
			rep, err := kartatest.Run(context.Background(), dir, kartatest.Options{Update: *update})
			require.NoError(t, err)
			for _, r := range rep.Results {
				assert.True(t, r.OK(), "%s: %s\n%s", r.Name, r.Failure, r.Diff)
			}
			assert.Positive(t, rep.Passed)
		})
	}
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
