package interpreter

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/object"
)

// Helpers shared by the write engine's tests.

// fixtureModel compiles testdata/revise/<name>.karta.yaml.
func fixtureModel(t testing.TB, name string) *model {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "revise", name+".karta.yaml"))
	require.NoError(t, err)
	return modelFrom(t, string(data))
}

// modelFrom compiles the one Karta in a YAML text.
func modelFrom(t testing.TB, text string) *model {
	t.Helper()
	ks, err := karta.Load([]byte(text), "test.karta.yaml")
	require.NoError(t, err)
	require.Len(t, ks, 1)
	m, err := newModel(mustCheck(t, ks[0]))
	require.NoError(t, err)
	return m
}

// fixtureObject decodes testdata/revise/<name>.yaml as the CLI does, with
// number literals kept as json.Number.
func fixtureObject(t testing.TB, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "revise", name+".yaml"))
	require.NoError(t, err)
	return objectFrom(t, string(data))
}

func objectFrom(t testing.TB, text string) map[string]any {
	t.Helper()
	docs, err := object.Decode([]byte(text), "test.yaml")
	require.NoError(t, err)
	require.Len(t, docs, 1)
	return docs[0].Object
}

// yamlValue decodes any YAML value, numbers as json.Number.
func yamlValue(t testing.TB, text string) any {
	t.Helper()
	var b strings.Builder
	b.WriteString("v:\n")
	for _, line := range strings.Split(text, "\n") {
		b.WriteString("  " + line + "\n")
	}
	return objectFrom(t, b.String())["v"]
}

// revisionsFrom decodes a YAML list of revisions.
func revisionsFrom(t testing.TB, text string) []Revision {
	t.Helper()
	list, ok := yamlValue(t, text).([]any)
	require.True(t, ok, "revisions must be a list")
	revs := make([]Revision, len(list))
	for i, e := range list {
		m := e.(map[string]any)
		revs[i].Component, _ = m["component"].(string)
		revs[i].Instance, _ = m["instance"].(string)
		t, _ := m["type"].(string)
		revs[i].Type = PatchType(t)
		revs[i].Patch = m["patch"]
	}
	return revs
}

// assertOps compares operations with a YAML list of expected ones; values
// compare as JSON.
func assertOps(t testing.TB, want string, got []PatchOp) {
	t.Helper()
	gotJSON, err := json.Marshal(got)
	require.NoError(t, err)
	if got == nil {
		gotJSON = []byte("[]")
	}
	var w any = []any{}
	if strings.TrimSpace(want) != "" {
		w = yamlValue(t, want)
	}
	wantJSON, err := json.Marshal(w)
	require.NoError(t, err)
	assert.JSONEq(t, string(wantJSON), string(gotJSON))
}

// errorLines returns the lines of a *ReviseError, failing on another type.
func errorLines(t testing.TB, err error) []string {
	t.Helper()
	var re *ReviseError
	require.ErrorAs(t, err, &re)
	lines := make([]string, len(re.Errors))
	for i, e := range re.Errors {
		lines[i] = e.Error()
	}
	return lines
}

// checkedWrite runs a write operation and checks the invariants every
// write holds (docs/karta.md, "Writes: all or nothing"): the input is not modified; on error there is no
// result; on success, the operations applied to a copy of the input give
// the result, and every subtree the operations do not touch is the
// input's own value.
func checkedWrite(t testing.TB, obj map[string]any, run func() (map[string]any, []PatchOp, error)) (map[string]any, []PatchOp, error) {
	t.Helper()
	before := deepCopyJSON(obj)
	out, ops, err := run()
	require.Equal(t, before, any(obj), "the input was modified")
	if err != nil {
		require.Nil(t, out)
		require.Nil(t, ops)
		return nil, nil, err
	}
	applied, perr := applyPatchOps(deepCopyJSON(obj), ops)
	require.NoError(t, perr, "the operations do not apply to the input")
	require.Equal(t, any(out), applied, "the operations do not give the result")
	assertShared(t, obj, out, ops, nil)
	return out, ops, nil
}

func checkedRevise(t testing.TB, m *model, obj map[string]any, revs []Revision) (map[string]any, []PatchOp, error) {
	t.Helper()
	out, ops, _, err := checkedReviseWarnings(t, m, obj, revs)
	return out, ops, err
}

// checkedReviseWarnings is checkedRevise that also returns the warnings,
// which an error comes without.
func checkedReviseWarnings(t testing.TB, m *model, obj map[string]any, revs []Revision) (map[string]any, []PatchOp, []ReviseWarning, error) {
	t.Helper()
	var warnings []ReviseWarning
	out, ops, err := checkedWrite(t, obj, func() (map[string]any, []PatchOp, error) {
		out, ops, ws, err := m.reviseSpec(context.Background(), obj, revs)
		warnings = ws
		return out, ops, err
	})
	if err != nil {
		require.Nil(t, warnings, "an error comes without warnings")
	}
	return out, ops, warnings, err
}

// assertShared checks that every map and slice of in that no operation
// touches is the very same value in out, and recurses where one does.
func assertShared(t testing.TB, in, out any, ops []PatchOp, at []any) {
	t.Helper()
	touched := false
	here := pointer(at)
	for _, op := range ops {
		if len(at) > 0 && (op.Path == here || strings.HasPrefix(here, op.Path+"/")) {
			return // replaced or removed whole
		}
		if strings.HasPrefix(op.Path, here+"/") {
			touched = true
		}
	}
	if !touched {
		switch in.(type) {
		case map[string]any, []any:
			if !sameContainer(in, out) && !isEmptySlice(in) {
				t.Errorf("%s: an untouched subtree was copied", here)
			}
		}
		return
	}
	switch x := in.(type) {
	case map[string]any:
		if y, ok := out.(map[string]any); ok {
			for k, v := range x {
				if w, ok := y[k]; ok {
					assertShared(t, v, w, ops, appendPath(at, k))
				}
			}
		}
	case []any:
		if y, ok := out.([]any); ok && len(x) == len(y) {
			for i := range x {
				assertShared(t, x[i], y[i], ops, appendPath(at, i))
			}
		}
	}
}

// isEmptySlice: an empty slice has no element whose address would show
// that it is shared.
func isEmptySlice(v any) bool {
	x, ok := v.([]any)
	return ok && len(x) == 0
}

// applyPatchOps is a small RFC 6902 applier for add, replace and remove,
// written for the tests so that the engine's operations are checked
// against an independent reading of the RFC. It modifies doc.
func applyPatchOps(doc any, ops []PatchOp) (any, error) {
	for _, op := range ops {
		steps, err := parsePointer(op.Path)
		if err != nil {
			return nil, err
		}
		if len(steps) == 0 {
			if op.Op == "remove" {
				return nil, fmt.Errorf("remove of the root")
			}
			doc = op.Value
			continue
		}
		parent := doc
		for _, s := range steps[:len(steps)-1] {
			switch p := parent.(type) {
			case map[string]any:
				parent = p[s]
			case []any:
				i, err := strconv.Atoi(s)
				if err != nil || i < 0 || i >= len(p) {
					return nil, fmt.Errorf("%s: bad index %q", op.Path, s)
				}
				parent = p[i]
			default:
				return nil, fmt.Errorf("%s: no container at %q", op.Path, s)
			}
		}
		last := steps[len(steps)-1]
		switch p := parent.(type) {
		case map[string]any:
			_, exists := p[last]
			switch op.Op {
			case "add":
				p[last] = op.Value
			case "replace":
				if !exists {
					return nil, fmt.Errorf("replace of missing %s", op.Path)
				}
				p[last] = op.Value
			case "remove":
				if !exists {
					return nil, fmt.Errorf("remove of missing %s", op.Path)
				}
				delete(p, last)
			default:
				return nil, fmt.Errorf("unexpected op %q", op.Op)
			}
		case []any:
			i, err := strconv.Atoi(last)
			if err != nil || i < 0 || i >= len(p) || op.Op != "replace" {
				return nil, fmt.Errorf("%s: unsupported array op %s", op.Path, op.Op)
			}
			p[i] = op.Value
		default:
			return nil, fmt.Errorf("%s: parent is not a container", op.Path)
		}
	}
	return doc, nil
}

func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("bad pointer %q", p)
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts, nil
}

// getPath reads a value by keys and indices, nil when missing.
func getPath(v any, steps ...any) any {
	for _, s := range steps {
		switch x := v.(type) {
		case map[string]any:
			v = x[s.(string)]
		case []any:
			i := s.(int)
			if i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}
