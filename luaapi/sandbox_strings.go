package luaapi

import (
	lua "github.com/yuin/gopher-lua"
)

// capStrings replaces the library functions that can make a string much
// larger than their arguments in one call, so they fail with a string size
// LimitError before allocating: string.rep (string.rep("x", 2^28) would
// allocate 256 MiB), string.format (widths), string.gsub (see newGsub) and
// table.concat. They are replaced in the library tables themselves, so
// ("x"):rep(n) is capped too.
//
// Not capped: the .. operator, a VM instruction gopher-lua gives no hook
// for. The other string functions return at most about their input's size.
func capStrings(L *lua.LState, str, tbl *lua.LTable, maxLen int) {
	limit := formatSize(maxLen)
	str.RawSetString("gsub", L.NewFunction(newGsub(maxLen, limit)))

	rep := str.RawGetString("rep").(*lua.LFunction).GFunction
	str.RawSetString("rep", L.NewFunction(func(L *lua.LState) int {
		s := L.CheckString(1)
		n := L.CheckInt(2)
		if n > 0 && len(s) > 0 && n > maxLen/len(s) {
			raiseLimit(L, KindStringSize, limit)
		}
		return rep(L)
	}))

	format := str.RawGetString("format").(*lua.LFunction).GFunction
	str.RawSetString("format", L.NewFunction(func(L *lua.LState) int {
		// Padding is the only part of the output not already in memory
		// as an argument; refuse it before formatting, check the result
		// after.
		if formatPadding(L.CheckString(1)) > maxLen {
			raiseLimit(L, KindStringSize, limit)
		}
		n := format(L)
		if s, ok := L.Get(-1).(lua.LString); ok && len(s) > maxLen {
			raiseLimit(L, KindStringSize, limit)
		}
		return n
	}))

	concat := tbl.RawGetString("concat").(*lua.LFunction).GFunction
	tbl.RawSetString("concat", L.NewFunction(func(L *lua.LState) int {
		size, n := concatSize(L, maxLen)
		charge(L, n)
		if size > maxLen {
			raiseLimit(L, KindStringSize, limit)
		}
		return concat(L)
	}))
}

// formatPadding adds up the widths and precisions of a format string's
// conversions (Go's fmt, which gopher-lua's string.format uses, caps each
// at 10^6, so a number of digits beyond that is counted as 10^6+1).
func formatPadding(f string) int {
	const fmtMax = 1e6 + 1
	total := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		i++
		if i < len(f) && f[i] == '%' {
			continue
		}
		for i < len(f) && (f[i] == '-' || f[i] == '+' || f[i] == ' ' || f[i] == '#' || f[i] == '0') {
			i++
		}
		for _, part := range [2]bool{true, false} {
			if !part {
				if i >= len(f) || f[i] != '.' {
					break
				}
				i++
			}
			n := 0
			for i < len(f) && f[i] >= '0' && f[i] <= '9' {
				if n < fmtMax {
					n = n*10 + int(f[i]-'0')
				}
				i++
			}
			total += min(n, fmtMax)
		}
		i-- // the loop's i++ moves to the byte after the conversion's
	}
	return total
}

// concatSize is the length of table.concat(t, sep, i, j)'s result, for the
// arguments on L's stack, counting no further than maxLen, and the number
// of elements concatenated. Bounds are clamped as gopher-lua clamps them;
// values concat rejects count nothing (concat raises its own error).
func concatSize(L *lua.LState, maxLen int) (size, elements int) {
	t := L.CheckTable(1)
	sep := len(L.OptString(2, ""))
	n := t.Len()
	i := L.OptInt(3, 1)
	j := L.OptInt(4, n)
	i, j = max(i, 1), min(j, n)
	total := 0
	for k := i; k <= j && total <= maxLen; k++ {
		switch v := t.RawGetInt(k).(type) {
		case lua.LString:
			total += len(v)
		case lua.LNumber:
			total += len(v.String())
		}
		if k < j {
			total += sep
		}
	}
	return total, max(j-i+1, 0)
}
