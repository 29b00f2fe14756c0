package luaapi

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// The gopher-lua this module builds with is the one stringTable was
// written against: otherwise lazy fills fall back to RawSetString, correct
// but slower, and this says so.
func TestTableLayoutIsKnown(t *testing.T) {
	assert.True(t, tableFast, "lua.LTable's fields are not gopher-lua v1.1.2's: stringTable falls back to RawSetString")
}

// tableEntries is what pairs visits, in its order; a walk that visits
// more members than the table has (a broken key index can cycle) is cut.
func tableEntries(tb *lua.LTable) []string {
	var out []string
	for k, v := tb.Next(lua.LNil); k != lua.LNil && len(out) <= 300; k, v = tb.Next(k) {
		out = append(out, fmt.Sprintf("%s=%s", k, v))
	}
	return out
}

// A table stringTable builds is the table RawSetString of the same pairs
// in the same order builds: pairs visits the same members in the same
// order, reads agree, and it stays so after the script writes to it
// (new members, replaced ones, deleted ones), which needs its key list and
// key-to-index map to be consistent.
func TestStringTableIsRawSetString(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	sub := L.NewTable()
	members := func(n int) ([]string, []lua.LValue) {
		keys := make([]string, n)
		vals := make([]lua.LValue, n)
		for i := range n {
			// Not in sorted order: insertion order is what counts.
			keys[i] = fmt.Sprintf("k%03d", (i*7)%n)
			switch i % 4 {
			case 0:
				vals[i] = lua.LString(fmt.Sprint("v", i))
			case 1:
				vals[i] = lua.LNumber(i)
			case 2:
				vals[i] = lua.LBool(i%3 == 0)
			default:
				vals[i] = sub
			}
		}
		return keys, vals
	}
	for _, fast := range []bool{true, false} {
		for _, n := range []int{0, 1, 2, 8, 9, 31, 100} {
			t.Run(fmt.Sprintf("fast=%v/n=%d", fast, n), func(t *testing.T) {
				saved := tableFast
				tableFast = fast && saved
				defer func() { tableFast = saved }()
				keys, vals := members(n)
				want := L.CreateTable(0, n)
				for i, k := range keys {
					want.RawSetString(k, vals[i])
				}
				got := &lua.LTable{}
				stringTable(got, lua.LNil, keys, vals)

				assert.Equal(t, lua.LNil, got.Metatable)
				assert.Equal(t, tableEntries(want), tableEntries(got))
				assert.Equal(t, want.Len(), got.Len())
				for _, k := range append(keys, "absent") {
					assert.Equal(t, want.RawGetString(k), got.RawGetString(k), k)
					assert.Equal(t, want.RawGet(lua.LString(k)), got.RawGet(lua.LString(k)), k)
				}

				for _, tb := range []*lua.LTable{want, got} {
					tb.RawSetString("new", lua.LString("n"))
					tb.RawSetH(lua.LString("other"), lua.LTrue)
					tb.RawSetInt(1, lua.LString("first"))
					if n > 2 {
						tb.RawSetString(keys[1], lua.LString("replaced"))
						tb.RawSetString(keys[2], lua.LNil)
					}
				}
				assert.Equal(t, tableEntries(want), tableEntries(got))
				// next from every key, as a script resuming pairs does.
				for k, steps := lua.LValue(lua.LNil), 0; steps <= 300; steps++ {
					wk, wv := want.Next(k)
					gk, gv := got.Next(k)
					require.Equal(t, wk, gk)
					require.Equal(t, wv, gv)
					if wk == lua.LNil {
						break
					}
					k = wk
				}
			})
		}
	}
}

// The metatable given is the table's.
func TestStringTableSetsMetatable(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	mt := L.NewTable()
	tb := &lua.LTable{Metatable: L.NewTable()}
	stringTable(tb, mt, []string{"a"}, []lua.LValue{lua.LTrue})
	assert.Same(t, mt, tb.Metatable)
	assert.Equal(t, lua.LTrue, tb.RawGetString("a"))
}
