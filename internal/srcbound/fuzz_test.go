package srcbound_test

import (
	"errors"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"github.com/kartalua/karta/internal/jqexpr"
	"github.com/kartalua/karta/internal/srcbound"
)

// fuzzNesting is the limit the fuzz targets scan with: small, so that the
// fuzzer reaches it.
const fuzzNesting = 12

// maxTreeDepth bounds the syntax tree of what the scanner accepts at
// fuzzNesting: a level of the scanner's is a few pointers of the tree's
// (an expression statement, its expression, the operand's node), and up
// to four binary operators or suffixes (chainWeight).
const maxTreeDepth = 24 * fuzzNesting

func seed(f *testing.F, fams []nest) {
	for _, fam := range fams {
		f.Add(fam.src(3))
		f.Add(fam.src(fuzzNesting + 1))
	}
}

// FuzzLua: what the scanner accepts, gopher-lua parses and compiles
// without a panic; what gopher-lua parses and the scanner refuses really
// nests deeper than a third of the limit (no false refusals of shallow
// code).
func FuzzLua(f *testing.F) {
	seed(f, luaNests)
	f.Add("local s = [==[ (( ]==] -- ((\n--[[ ( ]] return s .. \"(\\\"\"")
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 {
			return
		}
		err := srcbound.Lua("c", src, 0, fuzzNesting)
		if err != nil {
			var le *srcbound.LimitError
			if !errors.As(err, &le) {
				t.Fatalf("not a *LimitError: %v", err)
			}
			if err := srcbound.Lua("c", src, 0, fuzzNesting*3); err == nil {
				return // refused at fuzzNesting and accepted at 3×: a depth between
			}
		}
		stmts, perr := parse.Parse(strings.NewReader(src), "c")
		if perr != nil {
			return
		}
		if err == nil {
			_, _ = lua.Compile(stmts, "c") // must not panic
			if d := astDepth(stmts); d > maxTreeDepth {
				t.Fatalf("accepted %q, whose syntax tree is %d deep", src, d)
			}
			return
		}
		if d := astDepth(stmts); d < fuzzNesting {
			t.Fatalf("refused %q (syntax tree %d deep): %v", src, d, err)
		}
	})
}

// FuzzJQ: what the scanner accepts, jqexpr.Check (gojq's parser, compiler
// and the safety walk) handles without a panic; what gojq parses shallowly
// the scanner accepts.
func FuzzJQ(f *testing.F) {
	seed(f, jqNests)
	f.Add(`"a\("(" + "\(1)")" # ((` + "\n| .a")
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 {
			return
		}
		err := srcbound.JQ(src, 0, fuzzNesting)
		if err == nil {
			a, _ := jqexpr.Check(src) // must not panic
			if d := astDepth(a.Query); d > maxTreeDepth {
				t.Fatalf("accepted %q, whose syntax tree is %d deep", src, d)
			}
			return
		}
		var le *srcbound.LimitError
		if !errors.As(err, &le) {
			t.Fatalf("not a *LimitError: %v", err)
		}
		if srcbound.JQ(src, 0, fuzzNesting*3) == nil {
			return
		}
		if a, errs := jqexpr.Check(src); len(errs) == 0 && a.Query != nil {
			if d := astDepth(a.Query); d < fuzzNesting {
				t.Fatalf("refused %q (syntax tree %d deep): %v", src, d, err)
			}
		}
	})
}
