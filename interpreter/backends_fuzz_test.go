package interpreter

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kartalua/karta/internal/jqexpr"
	"github.com/kartalua/karta/internal/third_party/gojq"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/object"
)

// FuzzBackends runs each (expression, input JSON) pair on every back end
// of the jq core (docs/jq.md) and requires what upstream gojq gives:
// outputs as canonical JSON, in order, and the same error message. The
// fork and the translated Lua on the portable runtime (what the exports
// ship) promise gojq's messages; the direct evaluator declines instead of failing, and
// where it runs it must give gojq's outputs with gojq succeeding. A back
// end the expression is outside of is skipped for that pair, and the
// seed corpus must run mostly on every back end.

// backendSeedExprs are seeds beyond the Kartas' expressions: jq's order
// across types, // over errors, and the builtins the export translates.
var backendSeedExprs = []string{
	`null < 1`, `"a" > 1`, `[] < {}`, `.x >= 1`, `.n >= 3`, `.x <= 2`, `.a == "str"`, `.b != null`, `.status.readyReplicas >= 1`, `{} < []`, `false < true`,
	`.a.b // 1`, `(error("x")) // 1`, `empty // 1`, `false // null // 2`, `(.a, .b) // "none"`,
	`.a // error("e")`, `[.[]? // "x"]`, `try (.a.b // 1) catch .`,
	`map(.x?)`, `[.[]? | select(. != null)]`, `any`, `all`, `any(. == 1)`, `all(.[]?; . != null)`,
	`[.[]?] | min`, `[.[]?] | max`, `add`, `[.[]? | numbers] | add`, `.a | ascii_downcase`, `.a | ascii_upcase`,
	`[.[]? | tostring] | join(",")`, `.a | startswith("s")`, `.a | endswith("r")`, `.a | ltrimstr("s")`,
	`.a | rtrimstr("r")`, `first`, `last`, `first(.[]?)`, `last(.[]?)`, `[.[]? | values]`, `not`,
	`tostring`, `tojson`, `length`, `keys`, `has("a")`, `to_entries`, `type`, `.a | tonumber?`,
	`.a | split(",")`, `.n * 2`, `.a * 2`, `. + {"z": 1}`, `[.[]?] - [1]`, `. * {"a": {"c": 2}}`,
	`.a / ","`, `.n % 3`, `-.n`, `[.[]? | type]`, `.a[1:3]`, `.[-1:]`, `.a[0]`,
	// The direct evaluator's constructs (package jqdirect).
	`{a: .n, "b": .a, (.a // "k"): 1}`, `{a, n}`, `"\(.n)-\(.a)-"`, `.a[(.n // 0):]`, `.[.a // "x"]?`, `.a[:-1]`,
	`[.[]?] | add`, `.a | [split(",")[] | ascii_upcase] | join("+")`, `. + {"n": 1} | .n`, `[.[]?] - [null, 1]`,
	`.n % -2`, `[.[]?] | any(. == 1)`, `[.[]?] | all(. != null)`, `.a | ltrimstr("x,") | rtrimstr(",z")`,
	`(.n // 0) | tostring | tonumber`, `.status | [.readyReplicas // 1, .replicas // 1] | max`, `.a // error("no a")`,
}

// backendSeedInputs pair with every seed expression.
var backendSeedInputs = []string{
	`{}`,
	`{"status": {}}`,
	`{"a": "str", "b": null, "n": 3, "x": 2}`,
	`{"a": {"b": "s", "c": 1}, "n": -1.5, "status": {"readyReplicas": 2, "phase": "Running"}}`,
	`[1, "a", null, true, {"x": 1}, [2], -0.5]`,
	`{"a": "x,y,z", "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "c"}]}}}}`,
	`null`,
}

// kartaExprs lists the jq expressions of every built-in and example Karta.
func kartaExprs(t testing.TB) (exprs []string, byKarta map[string][]string) {
	var files []string
	for _, pattern := range []string{"../builtin/kartas/*.yaml", "../examples/*/karta*.yaml", "../examples/kartas/*.yaml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	seen := map[string]bool{}
	byKarta = map[string][]string{}
	for _, f := range files {
		kartas, err := karta.LoadFile(f)
		if err != nil {
			continue // examples/kartas/broken.yaml and the like
		}
		for _, k := range kartas {
			for _, p := range collectPaths(k) {
				byKarta[k.Name] = append(byKarta[k.Name], p.expr)
				if !seen[p.expr] {
					seen[p.expr] = true
					exprs = append(exprs, p.expr)
				}
			}
		}
	}
	if len(exprs) < 50 {
		t.Fatalf("only %d expressions in %d Karta files", len(exprs), len(files))
	}
	return exprs, byKarta
}

// exampleJSON returns the example objects of a built-in as JSON texts.
func exampleJSON(name string) []string {
	files, _ := filepath.Glob("../examples/" + name + "/*.yaml")
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		docs, err := object.Decode(data, f)
		if err != nil {
			continue
		}
		for _, d := range docs {
			if b, err := json.Marshal(d.Object); err == nil {
				out = append(out, string(b))
			}
			if len(out) == 2 {
				return out
			}
		}
	}
	return out
}

// backendCounts tally the pairs each back end ran (seed corpus only).
var backendCounts struct {
	pairs, fork, direct, portable atomic.Int64
}

func FuzzBackends(f *testing.F) {
	exprs, byKarta := kartaExprs(f)
	seen := map[[2]string]bool{}
	seeds := 0
	add := func(expr, input string) {
		if !seen[[2]string{expr, input}] {
			seen[[2]string{expr, input}] = true
			f.Add(expr, input)
			seeds++
		}
	}
	for _, e := range exprs {
		for _, in := range backendSeedInputs[:3] {
			add(e, in)
		}
	}
	names := make([]string, 0, len(byKarta))
	for name := range byKarta {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, obj := range exampleJSON(name) {
			for _, e := range byKarta[name] {
				add(e, obj)
			}
		}
	}
	for _, e := range append(backendSeedExprs, backendFindings...) {
		for _, in := range backendSeedInputs {
			add(e, in)
		}
	}
	fuzzing := flag.Lookup("test.fuzz") != nil && flag.Lookup("test.fuzz").Value.String() != ""
	f.Cleanup(func() {
		if fuzzing {
			return
		}
		pairs := backendCounts.pairs.Load()
		f.Logf("%d seeds, %d compared pairs: fork %d, direct %d, portable Lua %d",
			seeds, pairs, backendCounts.fork.Load(), backendCounts.direct.Load(), backendCounts.portable.Load())
		// Most seeds run on every back end; the direct evaluator covers
		// plain paths only, and declines on every error.
		if pairs < int64(seeds)*9/10 || backendCounts.fork.Load() != pairs ||
			backendCounts.portable.Load() < pairs*9/10 ||
			backendCounts.direct.Load() < pairs/3 {
			f.Errorf("too few seeds ran on every back end")
		}
	})
	f.Fuzz(func(t *testing.T, expr, input string) {
		if len(expr) > 256 || len(input) > 1<<16 {
			return
		}
		if _, errs := jqexpr.Check(expr); len(errs) > 0 {
			return // validate refuses it: no back end ever sees it
		}
		for _, unbounded := range []string{"..", "range", "repeat", "limit", "recurse", "until", "while"} {
			if strings.Contains(expr, unbounded) {
				return // unbounded on gojq too; not what this target is about
			}
		}
		in, err := decodeJSON(input)
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		want, err := runOracle(ctx, expr, in)
		if err != nil || want.skip {
			return
		}
		backendCounts.pairs.Add(1)
		check := func(name string, got backendOutcome) {
			t.Helper()
			if !got.skip && !got.equal(want) {
				t.Fatalf("%s on %s: %s differs from gojq\n  gojq: %v\n  %s: %v", expr, compactJSON(input), name, want, name, got)
			}
		}

		fork, err := runFork(ctx, expr, in)
		if err != nil {
			t.Fatalf("%s: the fork does not compile what gojq compiles: %v", expr, err)
		}
		check("the metered fork", fork)
		backendCounts.fork.Add(1)

		if d, ran := runDirect(expr, in); ran {
			if want.err != "" {
				t.Fatalf("%s on %s: the direct evaluator gave %v where gojq fails: %s", expr, compactJSON(input), d, want.err)
			}
			check("the direct evaluator", d)
			backendCounts.direct.Add(1)
		}

		p, ran, err := runPortable(ctx, expr, in)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if ran {
			if !p.equal(want) && inexactInLua(ctx, expr, in, p) {
				return // inexact integers: the portable runtime computes as Lua does
			}
			check("the translated Lua on the portable runtime (the exports)", p)
			backendCounts.portable.Add(1)
		}
	})
}

// backendFindings are inputs the fuzzer found, kept as seeds.
var backendFindings = []string{}

// TestBackendSeedsParse keeps the hand-written seeds meaningful: each is
// valid jq that validate accepts.
func TestBackendSeedsParse(t *testing.T) {
	for _, e := range append(backendSeedExprs, backendFindings...) {
		if _, err := gojq.Parse(e); err != nil {
			t.Errorf("%s: %v", e, err)
		}
		if _, errs := jqexpr.Check(e); len(errs) > 0 {
			t.Errorf("%s: %v", e, errs)
		}
	}
}
