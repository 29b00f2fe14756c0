package jqlua

import (
	"strings"

	"github.com/kartalua/karta/internal/third_party/gojq"

	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
)

// The string builtins and the others added for the export's subset. Their
// common cases (string operands) are computed here as gojq computes them;
// everything else, errors included, goes to gojq.

var (
	slowMin        = mustCompile(`$a | min`, "$a")
	slowMax        = mustCompile(`$a | max`, "$a")
	slowToJSON     = mustCompile(`$a | tojson`, "$a")
	slowJoin       = mustCompile(`$a | join($b)`, "$a", "$b")
	slowSplit      = mustCompile(`$a | split($b)`, "$a", "$b")
	slowStartsWith = mustCompile(`$a | startswith($b)`, "$a", "$b")
	slowEndsWith   = mustCompile(`$a | endswith($b)`, "$a", "$b")
	slowLtrimstr   = mustCompile(`$a | ltrimstr($b)`, "$a", "$b")
	slowRtrimstr   = mustCompile(`$a | rtrimstr($b)`, "$a", "$b")
	slowDowncase   = mustCompile(`$a | ascii_downcase`, "$a")
	slowUpcase     = mustCompile(`$a | ascii_upcase`, "$a")
)

// J.min(v), J.max(v): an array's least or greatest element in jq's order.
func (r *runtime) luaMin(L *lua.LState) int {
	L.Push(r.slow(L, slowMin, L.Get(1)))
	return 1
}

func (r *runtime) luaMax(L *lua.LState) int {
	L.Push(r.slow(L, slowMax, L.Get(1)))
	return 1
}

// J.tojson(v): compact JSON with sorted keys, strings included.
func (r *runtime) luaToJSON(L *lua.LState) int {
	switch x := L.Get(1).(type) {
	case lua.LNumber:
		L.Push(lua.LString(formatNumber(float64(x))))
	case lua.LBool:
		L.Push(lua.LString(x.String()))
	default:
		L.Push(r.slow(L, slowToJSON, x))
	}
	return 1
}

// J.join(v, sep).
func (r *runtime) luaJoin(L *lua.LState) int {
	L.Push(r.slow(L, slowJoin, L.Get(1), L.Get(2)))
	return 1
}

// twoStrings returns both arguments when they are strings.
func twoStrings(L *lua.LState) (s, t string, ok bool) {
	a, okA := L.Get(1).(lua.LString)
	b, okB := L.Get(2).(lua.LString)
	return string(a), string(b), okA && okB
}

// J.split(v, sep): gojq's split/1, a plain separator.
func (r *runtime) luaSplit(L *lua.LState) int {
	s, sep, ok := twoStrings(L)
	if !ok {
		L.Push(r.slow(L, slowSplit, L.Get(1), L.Get(2)))
		return 1
	}
	// Charged before splitting: the pieces are counted without being made.
	n := 0
	if s != "" {
		n = strings.Count(s, sep) + 1
	}
	luaapi.ChargeMemory(L, len(s)+24*n)
	var parts []string
	if s != "" {
		parts = strings.Split(s, sep)
	}
	out := r.vs.NewArray(L, len(parts))
	for i, p := range parts {
		out.RawSetInt(i+1, lua.LString(p))
	}
	L.Push(out)
	return 1
}

func (r *runtime) stringTest(L *lua.LState, slow *gojq.Code, test func(s, t string) bool) int {
	if s, t, ok := twoStrings(L); ok {
		L.Push(lua.LBool(test(s, t)))
	} else {
		L.Push(r.slow(L, slow, L.Get(1), L.Get(2)))
	}
	return 1
}

func (r *runtime) luaStartsWith(L *lua.LState) int {
	return r.stringTest(L, slowStartsWith, strings.HasPrefix)
}

func (r *runtime) luaEndsWith(L *lua.LState) int {
	return r.stringTest(L, slowEndsWith, strings.HasSuffix)
}

func (r *runtime) stringMap(L *lua.LState, slow *gojq.Code, fn func(s, t string) string) int {
	if s, t, ok := twoStrings(L); ok {
		L.Push(lua.LString(fn(s, t)))
	} else {
		L.Push(r.slow(L, slow, L.Get(1), L.Get(2)))
	}
	return 1
}

func (r *runtime) luaLtrimstr(L *lua.LState) int {
	return r.stringMap(L, slowLtrimstr, strings.TrimPrefix)
}

func (r *runtime) luaRtrimstr(L *lua.LState) int {
	return r.stringMap(L, slowRtrimstr, strings.TrimSuffix)
}

// asciiCase is gojq's ascii_downcase/ascii_upcase mapping: ASCII letters
// only, by strings.Map (which also replaces invalid UTF-8).
func (r *runtime) asciiCase(L *lua.LState, slow *gojq.Code, from, to, delta rune) int {
	s, ok := L.Get(1).(lua.LString)
	if !ok {
		L.Push(r.slow(L, slow, L.Get(1)))
		return 1
	}
	luaapi.ChargeMemory(L, len(s))
	L.Push(lua.LString(strings.Map(func(c rune) rune {
		if from <= c && c <= to {
			return c + delta
		}
		return c
	}, string(s))))
	return 1
}

func (r *runtime) luaASCIIDowncase(L *lua.LState) int {
	return r.asciiCase(L, slowDowncase, 'A', 'Z', 'a'-'A')
}

func (r *runtime) luaASCIIUpcase(L *lua.LState) int {
	return r.asciiCase(L, slowUpcase, 'a', 'z', 'A'-'a')
}
