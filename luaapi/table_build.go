package luaapi

import (
	lua "github.com/yuin/gopher-lua"
)

// A lazy level's member tables come from one slab (memberSlabs). Its own
// table is sized by CreateTable and filled with RawSetString, which grows
// the table's key list and key index from nothing: writing gopher-lua's
// unexported fields would save those (session 16 measured it,
// docs/performance.md), but karta does not reach into a dependency's
// private fields or forge interface values — an embedder's gopher-lua of
// another layout, or a Go runtime of another interface layout, would
// break silently.

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
