package jqdirect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// TestSharedAgreesWithRun: a program run through a shared prefix
// (CompileShared, Scratch.Share) gives what it gives without one, split
// after every segment of its chain, with the prefix's outputs evaluated
// in the Scratch or taken from it.
func TestSharedAgreesWithRun(t *testing.T) {
	vars := []string{"$rs", "$rt", "$pad"}
	split := 0
	for _, expr := range append(append([]string{}, directExprs...), varExprs...) {
		q, err := gojq.Parse(expr)
		require.NoError(t, err, expr)
		plain := Compile(q, vars...)
		if plain == nil {
			continue
		}
		n := len(Segments(q))
		for k := 1; k < n; k++ {
			shared := CompileShared(q, k, vars...)
			require.NotNil(t, shared, expr)
			if shared.pre == nil {
				continue
			}
			split++
			for _, text := range directInputs {
				for form, in := range decodeThreeWays(t, text) {
					vals := []any{[]any{in}, in}
					s := Scratch{Vars: vals}
					want, wantOK := plain.Run(in, &s)
					s.Release()
					s = Scratch{Vars: vals, Share: true}
					// The first run evaluates the prefix, the second takes it.
					for round := range 2 {
						got, ok := shared.Run(in, &s)
						require.Equal(t, wantOK, ok, "%s split after %d on %s (%s), round %d", expr, k, text, form, round)
						if ok {
							assert.Equal(t, normalJSON(t, want), normalJSON(t, got), "%s split after %d on %s (%s), round %d", expr, k, text, form, round)
						}
					}
					if _, isMap := in.(map[string]any); isMap {
						assert.Len(t, s.shared, 1, "%s: the prefix is kept once", expr)
					}
					s.Release()
					assert.Empty(t, s.shared, "Release drops the prefixes")
				}
			}
		}
	}
	assert.Greater(t, split, 100)
}

// TestSharedPrefixIsShared: two programs with the same first segments
// evaluate them once per object; another object, another variable list
// or another prefix is another entry.
func TestSharedPrefixIsShared(t *testing.T) {
	compile := func(expr string, k int, vars ...string) *Program {
		q, err := gojq.Parse(expr)
		require.NoError(t, err)
		p := CompileShared(q, k, vars...)
		require.NotNil(t, p)
		require.NotNil(t, p.pre, expr)
		return p
	}
	a := compile(`select(.n > 1) | .a | .x`, 1)
	b := compile(`select(.n > 1) | .s`, 1)
	c := compile(`select(.n > 1) | .a | .y`, 2)
	d := compile(`select(.n > 1) | .s`, 1, "$v")
	assert.Equal(t, a.preID, b.preID)
	assert.NotEqual(t, a.preID, c.preID)
	assert.NotEqual(t, b.preID, d.preID)
	o1, o2 := map[string]any{"n": int64(2), "a": map[string]any{"x": "1"}, "s": "s"}, map[string]any{"n": int64(0)}
	s := Scratch{Share: true}
	defer s.Release()
	for _, p := range []*Program{a, b, a, b} {
		_, ok := p.Run(o1, &s)
		require.True(t, ok)
	}
	assert.Len(t, s.shared, 1)
	for _, p := range []*Program{a, b, c, d} {
		_, ok := p.Run(o2, &s)
		require.True(t, ok)
	}
	assert.Len(t, s.shared, 4, "o2 with a's prefix, c's and d's")
}

// TestSharedPathKeys: a path of plain keys is a segment per key, so that
// programs that read below the same place share the walk to it; a prefix
// that is a plain path alone is read again rather than shared, and a path
// with an optional, iterated or computed step stays one segment.
func TestSharedPathKeys(t *testing.T) {
	segments := func(expr string) []string {
		q, err := gojq.Parse(expr)
		require.NoError(t, err)
		var texts []string
		for _, sg := range Segments(q) {
			texts = append(texts, sg.Text)
		}
		return texts
	}
	assert.Equal(t, []string{"select(.n > 1)", ".a", ".b", ".c"}, segments(`select(.n > 1) | .a.b.c`))
	assert.Equal(t, []string{".a", ".b", ".c"}, segments(`.a.b | .c`))
	for _, whole := range []string{`.a.b?`, `.a[].b`, `.a["b"]`, `.a[0]`, `.a[1:]`} {
		assert.Equal(t, []string{whole}, segments(whole), whole)
	}
	q, err := gojq.Parse(`select(.n > 1) | .a.b | .c`)
	require.NoError(t, err)
	var inner []bool
	for _, sg := range Segments(q) {
		inner = append(inner, sg.Inner)
	}
	assert.Equal(t, []bool{false, true, false, false}, inner, "only a cut inside .a.b is inner")

	compile := func(expr string, k int) *Program {
		q, err := gojq.Parse(expr)
		require.NoError(t, err)
		p := CompileShared(q, k)
		require.NotNil(t, p, expr)
		return p
	}
	x, y := compile(`select(.n > 1) | .a.b.x`, 3), compile(`select(.n > 1) | .a.b | .y`, 3)
	require.True(t, x.SharesPrefix())
	assert.Equal(t, x.preID, y.preID, "select(.n > 1) | .a.b")
	assert.False(t, compile(`.a.b.x`, 2).SharesPrefix(), "a plain path is read again")

	obj := map[string]any{"n": int64(2), "a": map[string]any{"b": map[string]any{"x": "1", "y": "2"}}}
	s := Scratch{Share: true}
	defer s.Release()
	for p, want := range map[*Program]string{x: "1", y: "2"} {
		got, ok := p.Run(obj, &s)
		require.True(t, ok)
		assert.Equal(t, []any{want}, got)
	}
	assert.Len(t, s.shared, 1)
}

// TestScratchReuse: a Scratch Reuse'd after Release keeps the room of its
// shared-prefix table and nothing else (no arena: the released call's
// outputs alias it), and a prefix kept for one object is not taken for
// another object at the same address in the next call.
func TestScratchReuse(t *testing.T) {
	q, err := gojq.Parse(".spec.a[] | .b")
	require.NoError(t, err)
	p := CompileShared(q, 1)
	require.NotNil(t, p)
	require.NotNil(t, p.pre)
	obj := map[string]any{"spec": map[string]any{"a": []any{map[string]any{"b": 1.0}}}}
	s := Scratch{Share: true}
	got, ok := p.Run(obj, &s)
	require.True(t, ok)
	assert.Equal(t, []any{int64(1)}, got)
	require.Len(t, s.shared, 1)
	room := cap(s.shared)
	s.Release()
	r := s.Reuse()
	assert.Empty(t, r.shared)
	assert.Equal(t, room, cap(r.shared), "the table's room is kept")
	assert.Nil(t, r.arena, "the arena is not")
	r.Share = true
	// The same map, changed between the calls: the new call evaluates
	// the prefix again.
	obj["spec"].(map[string]any)["a"] = []any{map[string]any{"b": 2.0}}
	got, ok = p.Run(obj, &r)
	require.True(t, ok)
	assert.Equal(t, []any{int64(2)}, got)
	require.Len(t, r.shared, 1, "the prefix of the new call alone")
}
