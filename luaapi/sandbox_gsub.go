package luaapi

import (
	"fmt"
	"strings"

	"github.com/kartalua/karta/luaapi/internal/luapattern"
	lua "github.com/yuin/gopher-lua"
)

// newGsub returns string.gsub with gopher-lua's exact semantics (its quirks
// included: "%x" in a replacement string stays "%x", the count is the
// number of matches, a non-string truthy replacement value becomes "", a
// limit of 0 replaces everything when the pattern matches at the start and
// nothing otherwise) but built in one pass, finding one match at a time.
// gopher-lua's own gsub copies the whole string once per replacement, so
// s:gsub("%s", "") on a 32 KiB string takes seconds inside one Go call, out
// of the deadline's reach. The result is capped at the string size limit
// while it is built, and matching is charged to the instruction budget.
func newGsub(p patterns) lua.LGFunction {
	return func(L *lua.LState) int {
		str := L.CheckString(1)
		pat := p.compile(L, L.CheckString(2))
		L.CheckTypes(3, lua.LTString, lua.LTTable, lua.LTFunction)
		repl := L.CheckAny(3)
		n := L.OptInt(4, -1)
		src := p.subject(L, str)

		var b strings.Builder
		last, matches := 0, 0
		find := pat.Find
		if n == 0 {
			// gopher-lua's quirk: with a limit of 0, a pattern that
			// does not match at the start replaces nothing; one that
			// does replaces everything.
			find, n = pat.MatchAt, -1
		}
		for offset := 0; offset <= len(str) && matches != n; {
			m, next := p.search(L, find, src, offset)
			find = pat.Find
			if m == nil {
				break
			}
			matches++
			offset = next
			start, end := m.Capture(0), m.Capture(1)
			if rep, ok := gsubReplacement(L, str, repl, m); ok {
				if b.Len()+(start-last)+len(rep) > p.maxSubject {
					raiseLimit(L, KindStringSize, p.limit)
				}
				b.WriteString(str[last:start])
				b.WriteString(rep)
				last = end
			}
			if pat.Anchored() {
				break
			}
		}
		if matches == 0 {
			L.SetTop(1)
			L.Push(lua.LNumber(0))
			return 2
		}
		if b.Len()+len(str)-last > p.maxSubject {
			raiseLimit(L, KindStringSize, p.limit)
		}
		b.WriteString(str[last:])
		chargeMemory(L, b.Len())
		L.Push(lua.LString(b.String()))
		L.Push(lua.LNumber(matches))
		return 2
	}
}

// gsubReplacement is the text replacing match m, and false when the match
// stays as it is (a table or function replacement gave nil or false).
func gsubReplacement(L *lua.LState, str string, repl lua.LValue, m *luapattern.MatchData) (string, bool) {
	switch r := repl.(type) {
	case lua.LString:
		return expandReplacement(L, str, string(r), m), true
	case *lua.LTable:
		idx := 0
		if m.CaptureLength() > 2 {
			idx = 2
		}
		var v lua.LValue
		if m.IsPosCapture(idx) {
			v = L.GetTable(r, lua.LNumber(m.Capture(idx)))
		} else {
			v = L.GetField(r, str[m.Capture(idx):m.Capture(idx+1)])
		}
		return lua.LVAsString(v), !lua.LVIsFalse(v)
	default: // *lua.LFunction, checked by the caller
		L.Push(repl)
		nargs := 0
		if m.CaptureLength() > 2 {
			for i := 2; i < m.CaptureLength(); i += 2 {
				if m.IsPosCapture(i) {
					L.Push(lua.LNumber(m.Capture(i)))
				} else {
					L.Push(lua.LString(capture(L, str, m, i)))
				}
				nargs++
			}
		} else {
			L.Push(lua.LString(capture(L, str, m, 0)))
			nargs++
		}
		L.Call(nargs, 1)
		v := L.Get(-1)
		L.Pop(1)
		return lua.LVAsString(v), !lua.LVIsFalse(v)
	}
}

// expandReplacement expands a replacement string as gopher-lua's flag
// scanner does: "%%" is "%", "%d" a capture, "%x" stays "%x", and a
// trailing "%" stays.
func expandReplacement(L *lua.LState, str, repl string, m *luapattern.MatchData) string {
	if strings.IndexByte(repl, '%') < 0 {
		return repl
	}
	var b strings.Builder
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		switch {
		case c != '%' || i == len(repl)-1:
			b.WriteByte(c)
		case repl[i+1] == '%':
			b.WriteByte('%')
			i++
		default:
			i++
			if d := repl[i]; d >= '0' && d <= '9' {
				b.WriteString(capture(L, str, m, 2*int(d-'0')))
			} else {
				b.WriteByte('%')
				b.WriteByte(d)
			}
		}
	}
	return b.String()
}

// capture is gopher-lua's capturedString: capture slot idx (0 the whole
// match, 2 the first capture, which is the whole match when there are no
// captures).
func capture(L *lua.LState, str string, m *luapattern.MatchData, idx int) string {
	if idx > 2 && idx >= m.CaptureLength() {
		L.RaiseError("invalid capture index")
	}
	if idx >= m.CaptureLength() && idx == 2 {
		idx = 0
	}
	if m.IsPosCapture(idx) {
		return fmt.Sprint(m.Capture(idx))
	}
	return str[m.Capture(idx):m.Capture(idx+1)]
}
