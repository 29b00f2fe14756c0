package luaapi

import (
	lua "github.com/yuin/gopher-lua"
)

// Filling a lazy object builds a table whose size is known before its
// first member goes in. gopher-lua can be told that size only through
// CreateTable, which allocates a table of its own: t, which a script
// already holds, must stay the same table, so the sized table is copied
// into t's place (one small allocation more than filling t). RawSetString
// still grows the table's key list and key index from nothing: writing
// gopher-lua's unexported fields would save those (session 16 measured
// it), but karta does not reach into a dependency's private fields or
// forge interface values — an embedder's gopher-lua of another layout,
// or a Go runtime of another interface layout, would break silently.

// stringTable turns t into a plain table whose members are keys[i] =
// vals[i] inserted in that order (vals holds no nil: a nil member is
// absent, so the caller leaves it out), what RawSetString of each pair
// on an empty table gives. meta is its metatable (lua.LNil for none).
func stringTable(L *lua.LState, t *lua.LTable, meta lua.LValue, keys []string, vals []lua.LValue) {
	*t = *L.CreateTable(0, len(keys))
	t.Metatable = meta
	for i, k := range keys {
		t.RawSetString(k, vals[i])
	}
}

// arrayTable turns t into an empty plain table whose array part has room
// for n elements, as CreateTable(n, 0) makes it. meta is its metatable.
func arrayTable(L *lua.LState, t *lua.LTable, meta lua.LValue, n int) {
	*t = *L.CreateTable(n, 0)
	t.Metatable = meta
}

// memberSlabs carve the lazy tables of one level's objects and arrays
// from one allocation, sized before the level fills. A member it has no
// room for (a kind not counted) is made as lazyTables.value makes it.
type memberSlabs struct {
	tables []lua.LTable
}

// slabCounter counts a level's members that go to the slab.
type slabCounter struct{ tables int }

func (c *slabCounter) add(v any) {
	switch v.(type) {
	case map[string]any, []any:
		c.tables++
	}
}

// slabs allocates the counted slab; a slab of one saves nothing and is
// not made.
func (c slabCounter) slabs() memberSlabs {
	var s memberSlabs
	if c.tables > 1 {
		s.tables = make([]lua.LTable, 0, c.tables)
	}
	return s
}

// member is lz.value(v, rules), from the slab where it has room: the
// slab never grows, so the pointers handed out stay valid.
func (lz *lazyTables) member(v any, rules *LazyRules, s *memberSlabs) lua.LValue {
	switch v.(type) {
	case map[string]any, []any:
		if len(s.tables) < cap(s.tables) {
			s.tables = append(s.tables, lua.LTable{Metatable: lz.meta})
			t := &s.tables[len(s.tables)-1]
			lz.src[t] = lazySource{v: v, rules: rules}
			return t
		}
	}
	return lz.value(v, rules)
}
