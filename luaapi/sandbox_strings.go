package luaapi

import (
	lua "github.com/yuin/gopher-lua"
)

// capStrings replaces the library functions that make strings so that
// each result is checked before it is allocated: against the string size
// limit (string.rep("x", 2^28) would allocate 256 MiB) and against the
// call's memory guard, which every string made is charged to. The pattern
// functions are replaced too (see installPatterns). They are replaced in
// the library tables themselves, so ("x"):rep(n) is capped too. The ..
// operator, a VM instruction, is capped by the guard rewrite (see
// guardConcat). string.sub, string.byte and the pattern captures return
// substrings, which share their subject's memory.
func capStrings(L *lua.LState, str, tbl *lua.LTable, maxLen int) {
	limit := formatSize(maxLen)
	installPatterns(L, str, maxLen)

	// wrap replaces a library function by one that learns the size of its
	// result from its arguments (size, before the call), refuses it over
	// the limit and charges it.
	wrap := func(lib *lua.LTable, name string, size func(L *lua.LState) int) {
		orig := lib.RawGetString(name).(*lua.LFunction).GFunction
		lib.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			n := size(L)
			if n > maxLen {
				raiseLimit(L, KindStringSize, limit)
			}
			chargeMemory(L, n)
			return orig(L)
		}))
	}
	wrap(str, "rep", func(L *lua.LState) int {
		s, n := L.CheckString(1), L.CheckInt(2)
		if n <= 0 || len(s) == 0 {
			return 0
		}
		if n > maxLen/len(s) {
			return maxLen + 1
		}
		return n * len(s)
	})
	// string.format: the result is bounded before formatting — the
	// format's text, its widths and precisions, and each argument as its
	// conversion renders it — and refused when that passes the limit, so
	// that 200 × %s of a 1 MiB string never builds 200 MiB; the result is
	// then checked and charged.
	format := str.RawGetString("format").(*lua.LFunction).GFunction
	str.RawSetString("format", L.NewFunction(func(L *lua.LState) int {
		if formatBound(L, maxLen) > maxLen {
			raiseLimit(L, KindStringSize, limit)
		}
		n := format(L)
		if s, ok := L.Get(-1).(lua.LString); ok {
			if len(s) > maxLen {
				raiseLimit(L, KindStringSize, limit)
			}
			chargeMemory(L, len(s))
		}
		return n
	}))
	sameSize := func(L *lua.LState) int { return len(L.CheckString(1)) }
	for _, name := range []string{"upper", "lower", "reverse"} {
		wrap(str, name, sameSize)
	}
	wrap(str, "char", func(L *lua.LState) int { return L.GetTop() })
	wrap(tbl, "concat", func(L *lua.LState) int {
		size, n := concatSize(L, maxLen)
		charge(L, n)
		return size
	})
}

// formatBound bounds the length of string.format's result for the
// arguments on L's stack (the format first): the format's own bytes, and
// for each conversion the larger of its width and what it renders — a
// string as itself (four bytes a byte and the quotes for %q, whose escapes
// are at most \ddd), a number in its precision plus the 320 digits a
// float64 may have, anything else in 64 bytes. Go's fmt, which gopher-lua's
// string.format uses, caps widths and precisions at 10^6; a longer number
// of digits counts as 10^6+1. It stops counting once past limit.
func formatBound(L *lua.LState, limit int) int {
	const fmtMax = 1e6 + 1
	f := L.CheckString(1)
	total := len(f)
	arg := 2
	for i := 0; i < len(f) && total <= limit; i++ {
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
		var width, prec int
		for part := range 2 {
			if part == 1 {
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
			if part == 0 {
				width = min(n, fmtMax)
			} else {
				prec = min(n, fmtMax)
			}
		}
		if i >= len(f) {
			break // a lone % at the end: format's own error
		}
		size := 64
		switch v := L.Get(arg).(type) {
		case lua.LString:
			size = len(v)
			if i < len(f) && f[i] == 'q' {
				size = 4*len(v) + 2
			}
		case lua.LNumber:
			size = prec + 320
		}
		total += max(width, size)
		arg++
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
