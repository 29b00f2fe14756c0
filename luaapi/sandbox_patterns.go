package luaapi

import (
	"errors"
	"math"
	"strings"
	"unsafe"

	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi/internal/luapattern"
)

// The pattern functions string.find, string.match and string.gmatch (and
// gsub, in sandbox_gsub.go) are gopher-lua's, with its semantics and
// quirks, over the step-counting copy of its matcher: each matcher step is
// charged to the call's instruction budget, and the subject of a pattern
// match may be at most the string size limit. gopher-lua's own matcher
// cannot be stopped: string.find(string.rep("a", 500), ".-.-.-b") runs for
// minutes inside one Go call, out of the deadline's reach.

// patterns holds what the pattern functions share: the subject cap and its
// printed form.
type patterns struct {
	maxSubject int
	limit      string
}

func installPatterns(L *lua.LState, str *lua.LTable, maxLen int) {
	p := patterns{maxSubject: maxLen, limit: formatSize(maxLen)}
	str.RawSetString("find", L.NewFunction(p.find))
	str.RawSetString("match", L.NewFunction(p.match))
	gmatch := L.NewClosure(p.gmatch, L.NewFunction(p.gmatchIter))
	str.RawSetString("gmatch", gmatch)
	str.RawSetString("gfind", gmatch)
	str.RawSetString("gsub", L.NewFunction(newGsub(p)))
}

// compile compiles a pattern, raising its syntax error as gopher-lua does.
func (p patterns) compile(L *lua.LState, pattern string) *luapattern.Pattern {
	pat, err := luapattern.Compile(pattern)
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	return pat
}

// subject refuses a subject longer than the cap before any matching.
func (p patterns) subject(L *lua.LState, s string) []byte {
	if len(s) > p.maxSubject {
		raiseLimit(L, KindStringSize, p.limit)
	}
	return unsafeBytes(s)
}

// findAt finds the first match at or after offset.
func (p patterns) findAt(L *lua.LState, pat *luapattern.Pattern, src []byte, offset int) (*luapattern.MatchData, int) {
	return p.search(L, pat.Find, src, offset)
}

// search runs one search (Find or MatchAt) and charges its steps to the
// call: a search that runs out of the call's budget ends the call with the
// instruction limit.
func (p patterns) search(L *lua.LState, find func([]byte, int, int64) (*luapattern.MatchData, int, int64, error), src []byte, offset int) (*luapattern.MatchData, int) {
	md, next, steps, err := find(src, offset, stepsLeft(L))
	charge(L, int(min(steps, math.MaxInt32)))
	if err != nil {
		if errors.Is(err, luapattern.ErrSteps) {
			// charge has not raised: there is no budget, only the
			// matcher's own fallback cap.
			raiseLimit(L, KindInstructions, "pattern matching")
		}
		L.RaiseError("%s", err.Error())
	}
	return md, next
}

func (p patterns) find(L *lua.LState) int {
	str := L.CheckString(1)
	pattern := L.CheckString(2)
	if len(pattern) == 0 {
		L.Push(lua.LNumber(1))
		L.Push(lua.LNumber(0))
		return 2
	}
	init := stringIndex(str, L.OptInt(3, 1))
	plain := L.GetTop() == 4 && lua.LVAsBool(L.Get(4))
	if plain {
		// gopher-lua slices str[init:] and panics when init is past
		// the end; Lua returns nil.
		if init > len(str) {
			L.Push(lua.LNil)
			return 1
		}
		charge(L, len(str)-init)
		pos := strings.Index(str[init:], pattern)
		if pos < 0 {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(lua.LNumber(init + pos + 1))
		L.Push(lua.LNumber(init + pos + len(pattern)))
		return 2
	}
	md, _ := p.findAt(L, p.compile(L, pattern), p.subject(L, str), init)
	if md == nil {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(lua.LNumber(md.Capture(0) + 1))
	L.Push(lua.LNumber(md.Capture(1)))
	return 2 + pushCaptures(L, str, md)
}

func (p patterns) match(L *lua.LState) int {
	str := L.CheckString(1)
	pattern := L.CheckString(2)
	offset := L.OptInt(3, 1)
	if offset < 0 {
		offset = len(str) + offset + 1
	}
	offset = max(offset-1, 0)
	md, _ := p.findAt(L, p.compile(L, pattern), p.subject(L, str), offset)
	if md == nil {
		// gopher-lua pushes nil and returns no values.
		L.Push(lua.LNil)
		return 0
	}
	if md.CaptureLength() == 2 {
		L.Push(lua.LString(str[md.Capture(0):md.Capture(1)]))
		return 1
	}
	return pushCaptures(L, str, md)
}

// gmatchState is a gmatch iterator's position. gopher-lua finds every
// match up front; this finds them one by one as the loop asks, with the
// same results, so a loop that stops early pays only for what it read.
type gmatchState struct {
	str  string
	pat  *luapattern.Pattern
	next int
	done bool
}

func (p patterns) gmatch(L *lua.LState) int {
	str := L.CheckString(1)
	pattern := L.CheckString(2)
	p.subject(L, str)
	L.Push(L.Get(lua.UpvalueIndex(1)))
	ud := L.NewUserData()
	ud.Value = &gmatchState{str: str, pat: p.compile(L, pattern)}
	L.Push(ud)
	return 2
}

func (p patterns) gmatchIter(L *lua.LState) int {
	st, ok := L.CheckUserData(1).Value.(*gmatchState)
	if !ok {
		L.ArgError(1, "gmatch state expected")
	}
	if st.done || st.next > len(st.str) {
		return 0
	}
	md, next := p.findAt(L, st.pat, unsafeBytes(st.str), st.next)
	st.next = next
	// An anchored pattern is tried once, as gopher-lua's Find does.
	st.done = st.pat.Anchored()
	if md == nil {
		st.done = true
		return 0
	}
	if md.CaptureLength() == 2 {
		L.Push(lua.LString(st.str[md.Capture(0):md.Capture(1)]))
		return 1
	}
	return pushCaptures(L, st.str, md)
}

// pushCaptures pushes a match's captures (not the whole match): strings,
// or positions for () captures. It returns how many it pushed.
func pushCaptures(L *lua.LState, str string, md *luapattern.MatchData) int {
	n := 0
	for i := 2; i < md.CaptureLength(); i += 2 {
		if md.IsPosCapture(i) {
			L.Push(lua.LNumber(md.Capture(i)))
		} else {
			L.Push(lua.LString(str[md.Capture(i):md.Capture(i+1)]))
		}
		n++
	}
	return n
}

// stringIndex is gopher-lua's luaIndex2StringIndex for a start position:
// a 1-based, possibly negative Lua index to a 0-based offset (at least 0,
// possibly past the end).
func stringIndex(str string, i int) int {
	if i != 0 {
		i--
	}
	if i < 0 {
		i = len(str) + i + 1
	}
	return max(i, 0)
}

// unsafeBytes views a string as bytes without copying; the matcher only
// reads them.
func unsafeBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
