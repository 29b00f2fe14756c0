package builtin_test

import (
	"context"
	"flag"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/internal/exampledir"
	"github.com/kartalua/karta/internal/kartatest"
	"github.com/kartalua/karta/internal/testobj"
	"github.com/kartalua/karta/interpreter"
)

var update = flag.Bool("update", false, "rewrite the golden outputs of the examples (make golden)")

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
			objects, err := exampledir.States(dir)
			require.NoError(t, err)
			require.NotEmpty(t, objects, "every built-in ships examples in %s", dir)
			for _, file := range objects {
				obj := testobj.Read(t, file)
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
