package srcbound_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"github.com/kartalua/karta/internal/jqexpr"
	"github.com/kartalua/karta/internal/srcbound"
)

// nest is a family of sources nested n deep.
type nest struct {
	name string
	src  func(n int) string
}

// chain is a family of expressions with n binary operators or suffixes,
// which count a quarter level each: nested n/4 deep.
func chain(name string, src func(n int) string) nest {
	return nest{name, func(n int) string { return src(4 * n) }}
}

func wrap(open, mid, close string) func(int) string {
	return func(n int) string { return strings.Repeat(open, n) + mid + strings.Repeat(close, n) }
}

// luaNests are the ways a Lua chunk nests gopher-lua's syntax tree.
var luaNests = []nest{
	{"unary minus", func(n int) string { return "return " + strings.Repeat("- ", n) + "1" }},
	{"not", func(n int) string { return "return " + strings.Repeat("not ", n) + "1" }},
	{"length", func(n int) string { return "return " + strings.Repeat("#", n) + "'x'" }},
	{"parentheses", func(n int) string { return "return " + wrap("(", "1", ")")(n) }},
	{"tables", func(n int) string { return "return " + wrap("{", "", "}")(n) }},
	{"table keys", func(n int) string { return "return " + wrap("{[", "1", "]=1}")(n) }},
	{"functions", wrap("function f() ", "", " end ")},
	{"anonymous functions", func(n int) string { return "return " + wrap("function() return ", "1", " end")(n) }},
	{"if blocks", wrap("if true then ", "", " end ")},
	{"do blocks", wrap("do ", "", " end ")},
	{"while loops", wrap("while false do ", "", " end ")},
	{"repeat loops", wrap("repeat ", "", " until true ")},
	chain("plus chain", func(n int) string { return "return 1" + strings.Repeat(" + 1", n) }),
	chain("concatenation chain", func(n int) string { return "return 'a'" + strings.Repeat(" .. 'a'", n) }),
	chain("power chain", func(n int) string { return "return 2" + strings.Repeat("^2", n) }),
	chain("and chain", func(n int) string { return "return true" + strings.Repeat(" and true", n) }),
	chain("field chain", func(n int) string { return "local a = {} return a" + strings.Repeat(".b", n) }),
	chain("index chain", func(n int) string { return "local a = {} return a" + strings.Repeat("[1]", n) }),
	chain("call chain", func(n int) string { return "local f f = function() return f end return f" + strings.Repeat("()", n) }),
	chain("string call chain", func(n int) string { return "local f f = function() return f end return f" + strings.Repeat("'x'", n) }),
	{"mixed", func(n int) string { return "return " + strings.Repeat("-(", n) + "1" + strings.Repeat(")", n) }},
}

// jqNests are the ways a jq expression nests gojq's syntax tree.
var jqNests = []nest{
	{"parentheses", wrap("(", ".", ")")},
	{"unary minus", func(n int) string { return strings.Repeat("- ", n) + "1" }},
	{"brackets", wrap("[", "", "]")},
	{"objects", wrap("{a: ", "1", "}")},
	{"interpolation", wrap(`"\(`, "1", `)"`)},
	{"if", wrap("if . then ", ".", " else . end")},
	{"try", func(n int) string { return strings.Repeat("try ", n) + "." }},
	{"reduce", func(n int) string {
		return strings.Repeat("reduce ", n) + ". as $x (.; .)" + strings.Repeat(" as $x (.; .)", n-1)
	}},
	{"def", func(n int) string { return strings.Repeat("def f: ", n) + "." + strings.Repeat("; f", n) }},
	chain("pipes", func(n int) string { return "." + strings.Repeat(" | .", n) }),
	chain("commas", func(n int) string { return "[1" + strings.Repeat(", 1", n) + "]" }),
	chain("alternatives", func(n int) string { return "." + strings.Repeat(" // .", n) }),
	chain("plus chain", func(n int) string { return "1" + strings.Repeat(" + 1", n) }),
	chain("field chain", func(n int) string { return "(.)" + strings.Repeat(".a", n) }),
	chain("index chain", func(n int) string { return "." + strings.Repeat("[0]", n) }),
	chain("optional chain", func(n int) string { return "(.)" + strings.Repeat(".a?", n) }),
	chain("bindings", func(n int) string { return strings.Repeat(". as $x | ", n) + "." }),
}

func assertNesting(t *testing.T, err error, name string) {
	t.Helper()
	var le *srcbound.LimitError
	require.True(t, errors.As(err, &le), "a *LimitError, got %v", err)
	assert.Equal(t, srcbound.KindNesting, le.Kind)
	assert.Equal(t, name, le.Name)
	assert.Equal(t, srcbound.DefaultMaxNesting, le.Limit)
	assert.Contains(t, err.Error(), "nesting depth exceeds the limit 200")
}

// Deep sources are refused, shallow ones of the same family accepted and
// parsed by the real parser and compiler; a million levels (past any size
// limit) are refused as soon as the limit is crossed.
func TestLuaNesting(t *testing.T) {
	for _, f := range luaNests {
		t.Run(f.name, func(t *testing.T) {
			assertNesting(t, srcbound.Lua("c", f.src(srcbound.DefaultMaxNesting+1), 0, 0), "c")
			assertNesting(t, srcbound.Lua("c", f.src(1_000_000), 1<<30, 0), "c")
			src := f.src(srcbound.DefaultMaxNesting / 8)
			require.NoError(t, srcbound.Lua("c", src, 0, 0))
			stmts, err := parse.Parse(strings.NewReader(src), "c")
			require.NoError(t, err)
			_, err = lua.Compile(stmts, "c")
			require.NoError(t, err)
		})
	}
}

func TestJQNesting(t *testing.T) {
	for _, f := range jqNests {
		t.Run(f.name, func(t *testing.T) {
			assertNesting(t, srcbound.JQ(f.src(srcbound.DefaultMaxNesting+1), 0, 0), srcbound.JQName)
			assertNesting(t, srcbound.JQ(f.src(1_000_000), 1<<30, 0), srcbound.JQName)
			src := f.src(srcbound.DefaultMaxNesting / 8)
			require.NoError(t, srcbound.JQ(src, 0, 0))
			_, errs := jqexpr.Check(src)
			for _, err := range errs { // a safety finding is fine; a limit or syntax error is not
				var e *jqexpr.Error
				require.True(t, errors.As(err, &e) && e.IsDisallowed(), "%v", err)
			}
		})
	}
}

// Brackets in strings and comments do not count; the line of the limit is
// the line where it was crossed.
func TestStringsCommentsAndLines(t *testing.T) {
	deep := strings.Repeat("(", 1000) + strings.Repeat("-", 1000)
	for _, src := range []string{
		`x = "` + deep + `"`,
		`x = '` + deep + `\'` + `'`,
		"x = [[" + deep + "]]",
		"x = [==[" + deep + "]] ]=] ]==]",
		"-- " + deep + "\nx = 1",
		"--[[" + deep + "\n]] x = 1",
		"--[=[" + deep + "]]\n]=] x = 1",
	} {
		assert.NoError(t, srcbound.Lua("c", src, 0, 0), src[:12])
	}
	for _, src := range []string{
		`"` + deep + `"`,
		`"\"` + deep + `"`,
		`"\(1)` + deep + `"`,
		"# " + deep + "\n.",
		"# a comment \\\n" + deep + "\n.",
	} {
		assert.NoError(t, srcbound.JQ(src, 0, 0), src[:12])
	}

	err := srcbound.Lua("karta:x/luaScript", "x = 1\n-- ((((\nlocal s = [[\n]]\nreturn "+strings.Repeat("(", 300), 0, 0)
	var le *srcbound.LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, 5, le.Line)
	assert.EqualError(t, err, "karta:x/luaScript: line 5: nesting depth exceeds the limit 200")

	err = srcbound.JQ(".a |\n# (\n\"\n\" |\n"+strings.Repeat("[", 300), 0, 0)
	require.ErrorAs(t, err, &le)
	assert.Equal(t, 5, le.Line)
}

func TestSourceSize(t *testing.T) {
	src := strings.Repeat("x = 1\n", srcbound.DefaultMaxSourceSize/6+1)
	err := srcbound.Lua("script:big.lua", src, 0, 0)
	var le *srcbound.LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, srcbound.KindSourceSize, le.Kind)
	assert.Equal(t, len(src), le.Size)
	assert.EqualError(t, err, "script:big.lua: source size 1048578 bytes exceeds the limit 1048576 bytes")
	assert.NoError(t, srcbound.Lua("script:big.lua", src, 2<<20, 0))

	require.ErrorAs(t, srcbound.JQ(strings.Repeat(" ", 101), 100, 0), &le)
	assert.Equal(t, srcbound.KindSourceSize, le.Kind)
	assert.Equal(t, srcbound.JQName, le.Name)
}

// A limit lower than the default applies.
func TestCustomNesting(t *testing.T) {
	src := "return " + strings.Repeat("(", 20) + "1" + strings.Repeat(")", 20)
	assert.NoError(t, srcbound.Lua("c", src, 0, 0))
	assert.Error(t, srcbound.Lua("c", src, 0, 10))
	assert.Error(t, srcbound.JQ(strings.Repeat("-", 11)+"1", 0, 10))
}
