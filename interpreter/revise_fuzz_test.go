package interpreter

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/jqvalue"
	"github.com/kartalua/karta/karta"
)

// fuzzFixture is a model with an object to revise.
type fuzzFixture struct {
	m   *model
	obj map[string]any
}

// FuzzReviseSpec revises fixed objects with patches of every type (merge,
// strategic, json) made from the fuzzer's bytes. Whatever the patch: no
// panic; the input is never modified; on error there is no result; on
// success the operations applied to a copy of the input give the result,
// untouched subtrees are shared, and (for one revision over a view without
// aliasing) every revised instance's view is the patch of its old view.
// The call's evaluator (revise with it) gives the same result, or the
// same error.
func FuzzReviseSpec(f *testing.F) {
	fixtures := []fuzzFixture{
		{fixtureModel(f, "pytorchjob"), fixtureObject(f, "pytorchjob")},
		{fixtureModel(f, "jobset"), fixtureObject(f, "jobset")},
		{fixtureModel(f, "leaderworkerset"), fixtureObject(f, "leaderworkerset")},
		{fixtureModel(f, "inferenceservice"), fixtureObject(f, "inferenceservice")},
		{fixtureModel(f, "milvus"), fixtureObject(f, "milvus")},
		{modelFrom(f, edgeKarta), objectFrom(f, edgeObject)},
	}
	// Every built-in, on its running example; the first byte of a seed
	// picks the fixture, so these come after the fixtures above.
	builtins := builtinFixtures(f)
	fixtures = append(fixtures, builtins...)
	// A fragmented view whose named main container and sidecars a
	// strategic patch merges by name (revise_patch_test.go).
	pool := byte(len(fixtures))
	fixtures = append(fixtures, fuzzFixture{modelFrom(f, poolKarta), objectFrom(f, poolObject)})
	for _, seed := range [][]byte{
		{pool, 0, 0, 2, 1, 0, 1, 2, 3, 5, 1},
		{pool, 0, 1, 1, 2, 5, 0, 3, 1, 2, 0, 0, 1},
	} {
		f.Add(seed)
	}
	for i := range builtins {
		b := byte(6 + i)
		for _, seed := range [][]byte{
			{b, 0, 2, 1, 0, 1, 2, 3, 5},
			{b, 0, 2, 1, 1, 1, 0, 1, 4, 2},
			{b, 1, 2, 1, 0, 1, 0, 1, 6},
			{b, 0, 3, 1, 1, 2, 6, 5, 0},
			{b, 2, 1, 3, 1, 2, 7, 2, 5, 9, 3, 1, 0, 4},
		} {
			f.Add(seed)
		}
	}
	for _, seed := range [][]byte{
		{},
		{0, 0, 2, 1, 0, 1, 2, 3, 5},
		{0, 0, 2, 1, 1, 1, 0, 1, 4, 2},
		{1, 0, 1, 1, 1, 1, 0, 2, 1, 2, 3},
		{2, 1, 2, 1, 0, 1, 0, 1, 6},
		{3, 0, 1, 1, 1, 1, 1, 2, 7, 9, 2},
		{3, 0, 0, 1, 1, 2, 6, 5, 0},
		{4, 0, 1, 1, 1, 1, 2, 8, 1, 3},
		{5, 0, 3, 1, 0, 1, 0, 1, 1, 4},
		{0, 2, 2, 1, 0, 1, 0, 3, 2, 1, 3, 2, 0, 1, 1, 4, 5},
		[]byte("metadata labels spec containers image resources affinity null"),
		// Found by fuzzing: a main container emptied or nulled away, and
		// aliasing fragment paths.
		[]byte("90117%1(71%1)"),
		append([]byte{4}, "0117%1(71%"...), // first found as "X0117%1(71%" among 6 fixtures
		append([]byte{5}, "0Y1Z%181"...),   // and "A0Y1Z%181"
		// Strategic and json revisions that write, on template, fragmented
		// and aliased views.
		{0, 0, 2, 1, 0, 1, 2, 3, 5, 1},
		{0, 3, 5, 6, 8, 9, 10, 0, 9, 7, 8, 9, 9},
		{1, 9, 9, 5, 7, 4, 0, 8, 11, 5, 9, 7, 8, 5, 9},
		{2, 6, 2, 5, 5, 0, 7, 5, 2, 0, 2, 6, 3, 2, 4, 11, 4, 1, 6},
		{0, 3, 4, 5, 6, 8, 4, 1, 6, 2, 6, 5, 4, 3, 9, 9},
		{3, 6, 1, 1, 0, 0, 9, 1, 9, 11, 0},
		{3, 3, 2, 0, 0, 6, 2, 11, 2, 8, 1, 6, 8, 11},
		{4, 3, 1, 9, 10, 0, 4, 9, 6, 1, 8, 7, 7, 6},
		{4, 6, 7, 1, 0, 0, 0, 9, 9, 10, 8},
		{5, 0, 11, 5, 6, 1, 10, 1, 11, 9, 6, 11, 2, 2, 1},
		{5, 9, 5, 5, 0, 0, 3, 3, 5, 1, 8},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &patchGen{data: data}
		fx := fixtures[g.next()%len(fixtures)]
		obj := deepCopyJSON(fx.obj).(map[string]any)
		revs := make([]Revision, 1+g.next()%3)
		for i := range revs {
			revs[i] = g.revision(fx.m, obj)
		}
		out, ops, warnings, err := checkedReviseWarnings(t, fx.m, obj, revs)
		if err == nil {
			// The operations found from the writes are diffOps' own.
			require.Equal(t, diffOps(obj, out), ops)
		}
		// The call's evaluator gives the same, errors included.
		assertDirectRevise(t, fx.m, obj, revs, out, ops, warnings, err)
		if err != nil || len(revs) != 1 {
			return
		}
		checkViews(t, fx.m, obj, out, revs[0])
	})
}

// checkViews compares, for each instance a successful single revision
// reached, the view of the revised object with the merge patch of the
// original view. Fragmented views drop nulls and empty objects first: a
// node written null reads back absent, and ancestors are built as objects.
func checkViews(t *testing.T, m *model, before, after map[string]any, rev Revision) {
	c := m.byName[rev.Component]
	if c.meta != nil {
		// podSpec and metadata on one location alias each other in the view.
		return
	}
	exprs := map[string]bool{}
	for _, f := range c.fragments {
		if exprs[f.p.expr] {
			return // two nodes on one location alias each other too
		}
		exprs[f.p.expr] = true
	}
	ctx := context.Background()
	old, err := m.instances(ctx, c, jqvalue.Input(before))
	require.NoError(t, err)
	revised, err := m.instances(ctx, c, jqvalue.Input(after))
	require.NoError(t, err)
	require.Equal(t, len(old), len(revised))
	for i := range old {
		if !old[i].present || (rev.Instance != allInstances && rev.Instance != old[i].id) {
			continue
		}
		v, fv, err := c.view(&old[i])
		require.NoError(t, err)
		pp, err := preparePatch(&rev)
		require.NoError(t, err)
		patched, err := c.patchInstanceView(pp, v, fv)
		require.NoError(t, err)
		var want any = patched
		gotView, _, err := c.view(&revised[i])
		require.NoError(t, err)
		var got any = gotView
		if c.style == karta.SpecStyleFragmented {
			want, got = pruneEmpty(want), pruneEmpty(got)
		}
		if !jsonEqual(want, got) {
			w, _ := json.Marshal(want)
			g, _ := json.Marshal(got)
			t.Fatalf("instance %q: view after the revision\n got %s\nwant %s", old[i].id, g, w)
		}
	}
}

func pruneEmpty(v any) any {
	if arr, ok := v.([]any); ok {
		out := make([]any, len(arr))
		for i, e := range arr {
			out[i] = pruneEmpty(e)
		}
		return out
	}
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for k, e := range m {
		e = pruneEmpty(e)
		if sub, isMap := e.(map[string]any); e == nil || (isMap && len(sub) == 0) {
			continue
		}
		out[k] = e
	}
	return out
}

// patchGen turns bytes into revisions; past the end of data it reads
// zeros, which ends every recursion.
type patchGen struct {
	data []byte
	pos  int
}

func (g *patchGen) next() int {
	if g.pos >= len(g.data) {
		return 0
	}
	b := g.data[g.pos]
	g.pos++
	return int(b)
}

var fuzzKeys = []string{
	"metadata", "spec", "labels", "annotations", "containers", "image", "resources", "affinity",
	"nodeAffinity", "podAffinity", "schedulerName", "tolerations", "name", "limits", "cpu", "team", "args", "x",
}

func (g *patchGen) revision(m *model, obj map[string]any) Revision {
	c := m.comps[g.next()%len(m.comps)]
	rev := Revision{Component: c.c.Name, Patch: g.object(0)}
	switch g.next() % 4 {
	case 0:
		rev.Instance = allInstances
	case 1:
		if insts, err := m.instances(context.Background(), c, jqvalue.Input(obj)); err == nil && len(insts) > 0 {
			rev.Instance = insts[g.next()%len(insts)].id
		}
	case 2:
		rev.Instance = "nope"
	}
	if g.next()%8 == 7 {
		rev.Component = "unknown"
	}
	// Past the end of data this reads 0: the seeds of merge patches stay
	// merge patches.
	switch g.next() % 4 {
	case 1, 3:
		rev.Type = PatchStrategic
	case 2:
		rev.Type = PatchJSON
		rev.Patch = g.ops(rev.Patch.(map[string]any))
	}
	return rev
}

// fuzzOps are the operations, a malformed one last; a byte picks one of
// the first 16 slots, so that it comes up rarely.
var fuzzOps = []string{"add", "add", "add", "replace", "replace", "replace", "remove", "remove", "move", "copy", "test",
	"add", "replace", "remove", "add", "rplace"}

// ops turns a generated object into JSON Patch operations: each of its
// values is the value of an operation whose path the bytes spell. One in
// eight operations lacks its value or from, to check those errors.
func (g *patchGen) ops(obj map[string]any) []any {
	if len(obj) == 0 {
		obj = map[string]any{fuzzKeys[g.next()%len(fuzzKeys)]: g.value(1)}
	}
	var out []any
	for _, k := range sortedKeys(obj) {
		name := fuzzOps[g.next()%len(fuzzOps)]
		op := map[string]any{"op": name, "path": g.pointer(k)}
		complete := g.next()%8 != 0
		switch name {
		case "move", "copy":
			if complete {
				op["from"] = g.pointer(fuzzKeys[g.next()%len(fuzzKeys)])
			}
		case "remove":
		default:
			if complete {
				op["value"] = obj[k]
			}
		}
		out = append(out, op)
	}
	return out
}

// fuzzParents are places of views where operations are likely to apply.
var fuzzParents = []string{"", "/metadata", "/metadata/labels", "/metadata/annotations", "/spec", "/spec/containers",
	"/spec/containers/0", "/spec/containers/1", "/spec/containers/0/resources", "/spec/affinity", "/spec/tolerations"}

// pointer spells a JSON pointer: a likely parent, then k or an index.
func (g *patchGen) pointer(k string) string {
	parent := fuzzParents[g.next()%len(fuzzParents)]
	switch g.next() % 5 {
	case 0:
		return parent + "/" + strconv.Itoa(g.next()%3)
	case 1:
		return parent + "/-"
	}
	return parent + "/" + k
}

func (g *patchGen) object(depth int) map[string]any {
	n := g.next() % 4
	out := make(map[string]any, n)
	for range n {
		out[fuzzKeys[g.next()%len(fuzzKeys)]] = g.value(depth + 1)
	}
	return out
}

func (g *patchGen) value(depth int) any {
	kind := g.next() % 8
	if depth >= 5 && kind >= 5 {
		kind = 1
	}
	switch kind {
	case 0:
		return nil
	case 1:
		return []string{"a", "b", ""}[g.next()%3]
	case 2:
		return json.Number([]string{"1", "1.0", "2", "-3", "1e3"}[g.next()%5])
	case 3:
		return g.next()%2 == 0
	case 4:
		return int64(g.next())
	case 5, 6:
		return g.object(depth)
	default:
		n := g.next() % 4
		arr := make([]any, n)
		for i := range arr {
			arr[i] = g.value(depth + 1)
		}
		return arr
	}
}

// builtinFixtures loads every built-in Karta (../builtin/kartas) with its
// running example (../examples/NAME/running.yaml), in name order.
func builtinFixtures(t testing.TB) []fuzzFixture {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "builtin", "kartas", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	sort.Strings(files)
	out := make([]fuzzFixture, 0, len(files))
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		karta, err := os.ReadFile(file)
		require.NoError(t, err)
		obj, err := os.ReadFile(filepath.Join("..", "examples", name, "running.yaml"))
		require.NoError(t, err)
		out = append(out, fuzzFixture{modelFrom(t, string(karta)), objectFrom(t, string(obj))})
	}
	return out
}
