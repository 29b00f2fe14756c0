package luaapi

import (
	"reflect"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// Filling a lazy object builds a table with string keys only, whose size
// is known before its first member goes in. gopher-lua's RawSetString
// cannot be told that size: per member it grows the table's key list and
// its key-to-index map from nothing and boxes the key into an interface
// twice over, which made it half of the allocations of a Karmada call
// (the scripts read their objects through lazy tables). stringTable
// builds the same table — the same members in the same insertion order,
// so that pairs and next visit them as before — with each part allocated
// once at its final size and the members' key boxes carved from one slab.
//
// It writes gopher-lua's unexported fields, so it checks at start-up that
// LTable is the struct it was written against (v1.1.2: the fields, their
// names, types and order); if it is not, tableFast is false and the
// tables are built with RawSetString as before
// (TestTableLayoutIsKnown fails, so an upgrade that changes the layout is
// seen rather than silently slower).

// tableLayout holds the offsets of LTable's string part.
type tableLayout struct {
	array, strdict, keys, k2i uintptr
}

var tableFields, tableFast = findTableLayout()

func findTableLayout() (tableLayout, bool) {
	rt := reflect.TypeFor[lua.LTable]()
	want := []struct {
		name string
		typ  reflect.Type
	}{
		{"Metatable", reflect.TypeFor[lua.LValue]()},
		{"array", reflect.TypeFor[[]lua.LValue]()},
		{"dict", reflect.TypeFor[map[lua.LValue]lua.LValue]()},
		{"strdict", reflect.TypeFor[map[string]lua.LValue]()},
		{"keys", reflect.TypeFor[[]lua.LValue]()},
		{"k2i", reflect.TypeFor[map[lua.LValue]int]()},
	}
	if rt.NumField() != len(want) {
		return tableLayout{}, false
	}
	for i, w := range want {
		f := rt.Field(i)
		if f.Name != w.name || f.Type != w.typ {
			return tableLayout{}, false
		}
	}
	return tableLayout{array: rt.Field(1).Offset, strdict: rt.Field(3).Offset, keys: rt.Field(4).Offset, k2i: rt.Field(5).Offset}, true
}

// iface is the layout of a non-empty interface value such as lua.LValue.
type iface struct {
	tab, data unsafe.Pointer
}

// lstringTab is the interface table of an LString held in an LValue.
var lstringTab = func() unsafe.Pointer {
	var v lua.LValue = lua.LString("")
	return (*iface)(unsafe.Pointer(&v)).tab
}()

// boxLString is the LValue holding *p, without copying it: p points into
// a slab that is never written again once boxed, as the runtime assumes of
// an interface's data.
func boxLString(p *lua.LString) lua.LValue {
	var v lua.LValue
	(*iface)(unsafe.Pointer(&v)).tab = lstringTab
	(*iface)(unsafe.Pointer(&v)).data = unsafe.Pointer(p)
	return v
}

// stringTable turns t into a plain table (no array part) whose members
// are keys[i] = vals[i] inserted in that order, what RawSetString of each
// pair on an empty table gives (vals holds no nil: a nil member is absent,
// so the caller leaves it out). meta is its metatable (lua.LNil for none).
// A table of no members has no string part, as CreateTable(0, 0) makes it.
func stringTable(t *lua.LTable, meta lua.LValue, keys []string, vals []lua.LValue) {
	*t = lua.LTable{Metatable: meta}
	if !tableFast {
		for i, k := range keys {
			t.RawSetString(k, vals[i])
		}
		return
	}
	n := len(keys)
	if n == 0 {
		return
	}
	strdict := make(map[string]lua.LValue, n)
	lkeys := make([]lua.LValue, n)
	k2i := make(map[lua.LValue]int, n)
	slab := make([]lua.LString, n)
	for i, k := range keys {
		strdict[k] = vals[i]
		slab[i] = lua.LString(k)
		lk := boxLString(&slab[i])
		lkeys[i] = lk
		k2i[lk] = i
	}
	base := unsafe.Pointer(t)
	*(*map[string]lua.LValue)(unsafe.Add(base, tableFields.strdict)) = strdict
	*(*[]lua.LValue)(unsafe.Add(base, tableFields.keys)) = lkeys
	*(*map[lua.LValue]int)(unsafe.Add(base, tableFields.k2i)) = k2i
}

// NewStringTable is an empty table with room for n string keys in each
// part RawSetString fills: L.CreateTable(0, n) sizes only the first, and
// RawSetString grows the key list and the key index from nothing (four
// allocations for a per-call environment's _G and a few globals).
func NewStringTable(L *lua.LState, n int) *lua.LTable {
	if !tableFast || n <= 0 {
		return L.CreateTable(0, n)
	}
	t := &lua.LTable{Metatable: lua.LNil}
	base := unsafe.Pointer(t)
	*(*map[string]lua.LValue)(unsafe.Add(base, tableFields.strdict)) = make(map[string]lua.LValue, n)
	*(*[]lua.LValue)(unsafe.Add(base, tableFields.keys)) = make([]lua.LValue, 0, n)
	*(*map[lua.LValue]int)(unsafe.Add(base, tableFields.k2i)) = make(map[lua.LValue]int, n)
	return t
}

// arrayTable turns t into an empty plain table whose array part has room
// for n elements, as CreateTable(n, 0) makes it, without the second
// table CreateTable would allocate only for t to copy it. meta is its
// metatable.
func arrayTable(L *lua.LState, t *lua.LTable, meta lua.LValue, n int) {
	if !tableFast {
		*t = *L.CreateTable(n, 0)
		t.Metatable = meta
		return
	}
	*t = lua.LTable{Metatable: meta}
	if n > 0 {
		*(*[]lua.LValue)(unsafe.Add(unsafe.Pointer(t), tableFields.array)) = make([]lua.LValue, 0, n)
	}
}

// memberSlabs carve the values of one level's members from two
// allocations, sized before the level fills: the lazy tables of its
// objects and arrays, and the boxes of its strings. A member they have no
// room for (a kind not counted, such as a view) is made as lazyTables.value
// makes it.
type memberSlabs struct {
	tables []lua.LTable
	strs   []lua.LString
}

// slabCounter counts a level's members by the slab they go to.
type slabCounter struct{ tables, strs int }

func (c *slabCounter) add(v any) {
	switch v.(type) {
	case map[string]any, []any:
		c.tables++
	case string:
		c.strs++
	}
}

// slabs allocates the counted slabs; a slab of one saves nothing and is
// not made, nor the string slab when boxLString cannot be trusted.
func (c slabCounter) slabs() memberSlabs {
	var s memberSlabs
	if c.tables > 1 {
		s.tables = make([]lua.LTable, 0, c.tables)
	}
	if c.strs > 1 && tableFast {
		s.strs = make([]lua.LString, 0, c.strs)
	}
	return s
}

// member is lz.value(v, rules), from the slabs where they have room: the
// slabs never grow, so the pointers handed out stay valid.
func (lz *lazyTables) member(v any, rules *LazyRules, s *memberSlabs) lua.LValue {
	switch x := v.(type) {
	case map[string]any, []any:
		if len(s.tables) < cap(s.tables) {
			s.tables = append(s.tables, lua.LTable{Metatable: lz.meta})
			t := &s.tables[len(s.tables)-1]
			lz.src[t] = lazySource{v: v, rules: rules}
			return t
		}
	case string:
		if len(s.strs) < cap(s.strs) {
			s.strs = append(s.strs, lua.LString(x))
			return boxLString(&s.strs[len(s.strs)-1])
		}
	}
	return lz.value(v, rules)
}
