package jqlua

import (
	"strconv"
	"strings"

	"github.com/kartalua/karta/internal/third_party/gojq"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Unit collects the accessors of one generated Lua chunk, on the portable
// runtime (PortablePrelude): an expression outside the translated subset,
// which only gojq could run, is a *NotPortableError.
type Unit struct {
	accessors []accessor
	byExpr    map[string]int
	// compact units read constant keys with calls
	// (NewCompactPortableUnit).
	compact bool
}

type accessor struct {
	one  bool // an accessor that returns its one output (One)
	expr string
	code string // the Lua definition of Q[i]
}

// NewPortableUnit returns an empty Unit.
func NewPortableUnit() *Unit { return &Unit{byExpr: map[string]int{}} }

// NewCompactPortableUnit is NewPortableUnit for a target that compiles a
// chunk on every call (Karmada): its accessors read a constant string key
// with J.field's call instead of inline from the table, half the bytes of
// each read for a fifth more VM instructions per run (the exported health
// scripts' mean, 1,080 → 1,332), which such a target's compile outweighs;
// and an accessor of one output ends in J.one's call, one line instead of
// two.
func NewCompactPortableUnit() *Unit { return &Unit{byExpr: map[string]int{}, compact: true} }

// Add translates expr and returns the Lua expression naming its accessor,
// e.g. `Q[3]`. The expression should have passed the caller's safety
// check (jqexpr.Check). Identical expressions share one accessor. The
// error is gojq's parse or compile error, or a *NotPortableError for an
// expression outside the translated subset or whose translation would be
// too big for Lua's limits.
func (u *Unit) Add(expr string) (ref string, err error) {
	if i, ok := u.byExpr[expr]; ok {
		return accessorRef(i), nil
	}
	q, err := gojq.Parse(expr)
	if err != nil {
		return "", err
	}
	return u.AddQuery(expr, q)
}

// AddQuery is Add for an expression already parsed (the checked form of a
// Karta's expression): q is expr's syntax tree, read and never changed.
func (u *Unit) AddQuery(expr string, q *gojq.Query) (ref string, err error) {
	if i, ok := u.byExpr[expr]; ok {
		return accessorRef(i), nil
	}
	if _, err := gojq.Compile(q); err != nil {
		return "", err
	}
	slot := len(u.accessors) + 1
	reason := untranslatable(q)
	var src string
	if reason == "" {
		src, err = generate(q, slot, u.compact)
		if err == nil {
			err = checkLua(src)
		}
		if err != nil {
			reason = "its translation is too big: " + err.Error()
		}
	}
	if reason != "" {
		return "", &NotPortableError{Expr: expr, Reason: reason}
	}
	u.accessors = append(u.accessors, accessor{expr: expr, code: src, one: isOne(q)})
	u.byExpr[expr] = slot - 1
	return accessorRef(slot - 1), nil
}

// One reports whether the accessor ref computes an
// expression with exactly one output (or an error) on every input: called
// as ref(v), without an output table, it returns that output.
func (u *Unit) One(ref string) bool {
	i := Slot(ref) - 1
	return i >= 0 && i < len(u.accessors) && u.accessors[i].one
}

func accessorRef(i int) string { return "Q[" + strconv.Itoa(i+1) + "]" }

// Slot turns an accessor reference "Q[3]" into 3 (0 for anything else).
func Slot(ref string) int {
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(ref, "Q["), "]"))
	if err != nil || n < 1 || accessorRef(n-1) != ref {
		return 0
	}
	return n
}

// checkLua compiles an accessor as gopher-lua would, so that one that
// breaks a limit of the Lua compiler (registers, constants, upvalues) is
// refused instead of failing the whole chunk.
func checkLua(src string) error {
	chunk, err := parse.Parse(strings.NewReader(PortableNames+src), "jqlua")
	if err != nil {
		return err
	}
	_, err = lua.Compile(chunk, "jqlua")
	return err
}

// Lua returns the definitions of every accessor, in the order they were
// added, each after a comment holding its jq expression. It is
// deterministic: the same Adds give the same text.
func (u *Unit) Lua() string {
	var sb strings.Builder
	for i, a := range u.accessors {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(luaComment(a.expr))
		sb.WriteString(a.code)
	}
	return sb.String()
}
