package luaapi

import (
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/pm"
)

// newGsub returns string.gsub with gopher-lua's exact semantics (its quirks
// included: "%x" in a replacement string stays "%x", the count is the
// number of matches, a non-string truthy replacement value becomes "") but
// built in one pass. gopher-lua's own gsub copies the whole string once per
// replacement, so s:gsub("%s", "") on a 32 KiB string takes seconds
// inside one Go call, out of the deadline's reach. The result is capped at
// maxLen bytes while it is built, and each match costs a step of the
// instruction budget.
func newGsub(maxLen int, limit string) lua.LGFunction {
	return func(L *lua.LState) int {
		str := L.CheckString(1)
		pat := L.CheckString(2)
		L.CheckTypes(3, lua.LTString, lua.LTTable, lua.LTFunction)
		repl := L.CheckAny(3)
		n := L.OptInt(4, -1)

		matches, err := pm.Find(pat, []byte(str), 0, n)
		if err != nil {
			L.RaiseError("%s", err.Error())
		}
		charge(L, len(matches))
		if len(matches) == 0 {
			L.SetTop(1)
			L.Push(lua.LNumber(0))
			return 2
		}
		var b strings.Builder
		last := 0
		for _, m := range matches {
			start, end := m.Capture(0), m.Capture(1)
			rep, ok := gsubReplacement(L, str, repl, m)
			if !ok {
				continue
			}
			if b.Len()+(start-last)+len(rep) > maxLen {
				raiseLimit(L, KindStringSize, limit)
			}
			b.WriteString(str[last:start])
			b.WriteString(rep)
			last = end
		}
		if b.Len()+len(str)-last > maxLen {
			raiseLimit(L, KindStringSize, limit)
		}
		b.WriteString(str[last:])
		L.Push(lua.LString(b.String()))
		L.Push(lua.LNumber(len(matches)))
		return 2
	}
}

// gsubReplacement is the text replacing match m, and false when the match
// stays as it is (a table or function replacement gave nil or false).
func gsubReplacement(L *lua.LState, str string, repl lua.LValue, m *pm.MatchData) (string, bool) {
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
func expandReplacement(L *lua.LState, str, repl string, m *pm.MatchData) string {
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
func capture(L *lua.LState, str string, m *pm.MatchData, idx int) string {
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
