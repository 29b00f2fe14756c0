package luaapi

import (
	"sort"

	lua "github.com/yuin/gopher-lua"
)

// The library functions that loop or allocate in Go in proportion to their
// arguments charge the call before they work (docs/security.md, "Limits";
// luaapi/charges.md lists every function with its charge). One step is
// about a VM instruction's work: copying eight values, or comparing or
// scanning sixteen bytes.
const (
	valuesPerStep = 8
	bytesPerStep  = 16
)

// chargeTableLibrary replaces insert, remove and sort of the table library
// (before they are made read-only-aware and lazy-filling): insert charges
// the slots it adds — table.insert(t, 60000000, v) grows the array to 60
// million slots inside one call — and the elements it shifts, remove the
// elements it shifts, and sort each comparison by the bytes it compares,
// so that a sort of 2,000 shared 1 MiB strings ends on the budget instead
// of running seconds past the deadline.
func chargeTableLibrary(L *lua.LState, tbl *lua.LTable) {
	orig := func(name string) lua.LGFunction { return tbl.RawGetString(name).(*lua.LFunction).GFunction }
	insert, remove := orig("insert"), orig("remove")
	tbl.RawSetString("insert", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		n := t.Len()
		switch L.GetTop() {
		case 2:
			chargeMemory(L, arraySlotCost)
		case 3:
			pos := L.CheckInt(2)
			switch {
			case pos > n && pos < lua.MaxArrayIndex:
				chargeMemory(L, (pos-n)*arraySlotCost)
			case pos > n || pos <= 0:
				chargeMemory(L, hashSlotCost)
			default:
				charge(L, (n-pos)/valuesPerStep)
				chargeMemory(L, arraySlotCost)
			}
		}
		return insert(L)
	}))
	tbl.RawSetString("remove", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		if L.GetTop() > 1 {
			if pos := L.CheckInt(2); pos >= 1 {
				charge(L, max(t.Len()-pos, 0)/valuesPerStep)
			}
		}
		return remove(L)
	}))
	tbl.RawSetString("sort", L.NewFunction(chargedSort))
}

// chargedSort is table.sort(t [, less]) sorting the elements 1..maxn of t
// in place with sort.Sort, as gopher-lua does (so the order is
// gopher-lua's, for any comparator), each comparison charged before it
// runs: a step, plus one per 16 bytes of the shorter string when two
// strings are compared (gopher-lua compares them byte by byte in Go). A
// comparator's own instructions are counted by the VM.
func chargedSort(L *lua.LState) int {
	t := L.CheckTable(1)
	var less *lua.LFunction
	if L.GetTop() != 1 {
		less = L.CheckFunction(2)
	}
	sort.Sort(&luaSorter{L: L, less: less, t: t, n: t.MaxN()})
	return 0
}

// luaSorter sorts the array part of t, 1..n.
type luaSorter struct {
	L    *lua.LState
	less *lua.LFunction
	t    *lua.LTable
	n    int
}

func (s *luaSorter) Len() int { return s.n }
func (s *luaSorter) Swap(i, j int) {
	a, b := s.t.RawGetInt(i+1), s.t.RawGetInt(j+1)
	s.t.RawSetInt(i+1, b)
	s.t.RawSetInt(j+1, a)
}
func (s *luaSorter) Less(i, j int) bool {
	a, b := s.t.RawGetInt(i+1), s.t.RawGetInt(j+1)
	steps := 1
	if x, ok := a.(lua.LString); ok {
		if y, ok := b.(lua.LString); ok {
			steps += min(len(x), len(y)) / bytesPerStep
		}
	}
	charge(s.L, steps)
	if s.less == nil {
		return s.L.LessThan(a, b)
	}
	s.L.Push(s.less)
	s.L.Push(a)
	s.L.Push(b)
	s.L.Call(2, 1)
	r := lua.LVAsBool(s.L.Get(-1))
	s.L.Pop(1)
	return r
}

// chargeBaseLibrary wraps the base functions whose work grows with their
// arguments: unpack and select copy values to the stack (bounded by its
// size, and charged per value), tonumber parses its whole string.
func chargeBaseLibrary(L *lua.LState, sandbox *lua.LTable) {
	wrapCharged(sandbox, "unpack", func(L *lua.LState) {
		if t, ok := L.Get(1).(*lua.LTable); ok {
			i, j := L.OptInt(2, 1), L.OptInt(3, t.Len())
			if j >= i {
				// More than the stack holds is the stack's limit.
				charge(L, int(min(int64(j)-int64(i), int64(L.Options.RegistryMaxSize)))/valuesPerStep)
				reserveStack(L, int64(j)-int64(i)+1)
			}
		}
	})
	wrapCharged(sandbox, "select", func(L *lua.LState) {
		charge(L, L.GetTop()/valuesPerStep)
	})
	wrapCharged(sandbox, "tonumber", func(L *lua.LState) {
		if s, ok := L.Get(1).(lua.LString); ok {
			charge(L, len(s)/bytesPerStep)
		}
	})
}

// chargeStringLibrary charges string.byte per value it returns.
func chargeStringLibrary(L *lua.LState, str *lua.LTable) {
	wrapCharged(str, "byte", func(L *lua.LState) {
		s := L.CheckString(1)
		i := L.OptInt(2, 1)
		j := L.OptInt(3, i)
		if j < 0 {
			j += len(s) + 1
		}
		if i < 0 {
			i += len(s) + 1
		}
		if j >= i {
			charge(L, min(j-i, len(s))/valuesPerStep)
			reserveStack(L, int64(min(j, len(s))-max(i, 1)+1))
		}
	})
}

// reserveStack makes room on L's data stack for the n values a builtin
// is about to push, in one step. gopher-lua grows the stack by
// RegistryGrowStep values when a push finds it full, copying all of it
// each time, so unpack of 128 Ki values (the default stack) copied about
// 130 MB on its way to the limit. n beyond what the stack can hold raises
// the stack's limit here, as the pushes would have.
func reserveStack(L *lua.LState, n int64) {
	if n <= 0 {
		return
	}
	top := L.GetTop()
	L.SetTop(top + int(min(n, int64(L.Options.RegistryMaxSize)+1)))
	L.SetTop(top)
}

// wrapCharged replaces lib[name], a Go function, by one that runs before
// first (which charges the call or raises a limit).
func wrapCharged(lib *lua.LTable, name string, before func(L *lua.LState)) {
	lib.RawSetString(name, runningFirst(lib.RawGetString(name).(*lua.LFunction), before))
}

// osDateDirective is the longest text one directive of os.date's format
// becomes (gopher-lua's strftime: "%c" is 24 bytes with a long zone name).
const osDateDirective = 32

// chargeOsLibrary wraps os.date: its result is bounded before formatting
// from the format (each directive 32 bytes at most, each other byte
// itself), refused over the string size limit and charged, so that a
// format of 500,000 directives never builds 9.5 MB; a "*t" table is
// charged as a table with gopher-lua's default map of 32 slots.
func chargeOsLibrary(L *lua.LState, osLib *lua.LTable, maxLen int) {
	limit := formatSize(maxLen)
	wrapCharged(osLib, "date", func(L *lua.LState) {
		if L.GetTop() == 0 {
			chargeMemory(L, osDateDirective)
			return
		}
		f := L.CheckString(1)
		if len(f) >= 2 && (f[0] == '*' || (f[0] == '!' && f[1] == '*')) {
			chargeMemory(L, tableCost+32*hashSlotCost) // gopher-lua's default map
			return
		}
		n := osDateBound(f)
		if n > maxLen {
			raiseLimit(L, KindStringSize, limit)
		}
		charge(L, len(f)/bytesPerStep)
		chargeMemory(L, n)
	})
}

// osDateBound bounds the length of os.date(f)'s result.
func osDateBound(f string) int {
	n := 0
	for i := 0; i < len(f); i++ {
		if f[i] == '%' && i+1 < len(f) {
			n += osDateDirective
			i++
			continue
		}
		n++
	}
	return n
}
