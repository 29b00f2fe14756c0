package jqlua

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kartalua/karta/internal/third_party/gojq"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Prelude is how a chunk holding a Unit's accessors must begin: it binds
// the runtime table J (Runtime) and the fallback programs (FallbackValue),
// passed as the chunk's two arguments, and the accessor table Q.
const Prelude = "local J, FALLBACK = ...\nlocal NULL = J.null\nlocal Q = {}\n"

// Unit collects the accessors of one generated Lua chunk.
type Unit struct {
	accessors []accessor
	byExpr    map[string]int
	fallbacks []*gojq.Code
	// translated and fallback count the accessors of each kind.
	translated, fallback int
	// gojqOnly runs every accessor on gojq: the tests compare the two
	// paths with it.
	gojqOnly bool
	// unchecked units skip checkLua (NewUncheckedUnit).
	unchecked bool
	// portable units have no gojq fallback (NewPortableUnit); compact
	// ones read constant keys with calls (NewCompactPortableUnit).
	portable, compact bool
}

type accessor struct {
	one    bool // a portable accessor that returns its one output (One)
	expr   string
	code   string // the Lua definition of Q[i]
	reason string // why it runs on gojq; "" when translated
}

// NewUnit returns an empty Unit.
func NewUnit() *Unit { return &Unit{byExpr: map[string]int{}} }

// NewUncheckedUnit returns an empty Unit that does not compile each
// translation alone to see whether it breaks a limit of the Lua compiler
// (registers, constants): that check parsed every accessor twice, a
// quarter of a Karta's compile time. The caller compiles the whole chunk
// and, only if that fails, builds it again from a NewUnit, whose check
// sends the offending accessors to gojq.
func NewUncheckedUnit() *Unit { return &Unit{byExpr: map[string]int{}, unchecked: true} }

// Add translates expr and returns the Lua expression naming its accessor,
// e.g. `Q[3]`. The expression should have passed the caller's safety
// check (jqexpr.Check). Identical expressions share one accessor. An
// expression outside the translated subset, or whose translation would be
// too big for Lua's limits, gets an accessor that runs a gojq program
// compiled here, once. The error is gojq's parse or compile error.
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
	code, err := gojq.Compile(q)
	if err != nil {
		return "", err
	}
	return u.AddCompiled(expr, q, code)
}

// AddCompiled is AddQuery for an expression whose gojq program the caller
// has compiled already (with no variables): code is q's, run by the
// accessor when the expression falls back to gojq.
func (u *Unit) AddCompiled(expr string, q *gojq.Query, code *gojq.Code) (ref string, err error) {
	if i, ok := u.byExpr[expr]; ok {
		return accessorRef(i), nil
	}
	slot := len(u.accessors) + 1
	reason := untranslatable(q)
	if u.gojqOnly && reason == "" {
		reason = "forced"
	}
	var src string
	if reason == "" {
		src, err = generate(q, slot, u.portable, u.compact)
		if err == nil && !u.unchecked {
			err = checkLua(src)
		}
		if err != nil {
			reason = "its translation is too big: " + err.Error()
		}
	}
	if reason != "" && u.portable {
		return "", &NotPortableError{Expr: expr, Reason: reason}
	}
	if reason != "" {
		src = fmt.Sprintf("Q[%d] = function(v, out)\n  J.gojq(FALLBACK, %d, v, out)\nend\n", slot, len(u.fallbacks))
		u.fallbacks = append(u.fallbacks, code)
		u.fallback++
	} else {
		u.translated++
	}
	u.accessors = append(u.accessors, accessor{expr: expr, code: src, reason: reason, one: u.portable && isOne(q)})
	u.byExpr[expr] = slot - 1
	return accessorRef(slot - 1), nil
}

// One reports whether the accessor ref of a portable unit computes an
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
// breaks a limit of the Lua compiler (registers, constants, upvalues) runs
// on gojq instead of failing the whole chunk.
func checkLua(src string) error {
	chunk, err := parse.Parse(strings.NewReader(Prelude+src), "jqlua")
	if err != nil {
		return err
	}
	_, err = lua.Compile(chunk, "jqlua")
	return err
}

// Lua returns the definitions of every accessor, in the order they were
// added, each after a comment holding its jq expression (and, for one
// that runs on gojq, why). It is deterministic: the same Adds give the same
// text.
func (u *Unit) Lua() string {
	var sb strings.Builder
	for i, a := range u.accessors {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(luaComment(a.expr))
		if a.reason != "" {
			sb.WriteString(luaComment("runs on gojq: " + a.reason))
		}
		sb.WriteString(a.code)
	}
	return sb.String()
}

// Fallbacks returns the gojq programs of the accessors that run on gojq,
// indexed by the id their Lua passes to J.gojq. Wrap them with
// FallbackValue for the chunk.
func (u *Unit) Fallbacks() []*gojq.Code { return u.fallbacks }

// Stats returns how many accessors were translated and how many run on
// gojq.
func (u *Unit) Stats() (translated, fallback int) { return u.translated, u.fallback }
