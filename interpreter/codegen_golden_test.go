package interpreter

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"github.com/kartalua/karta/karta"
)

// updateGoldens rewrites testdata/golden/*.lua from the current codegen:
//
//	go test -run TestCodegenGolden ./interpreter/ -update
var updateGoldens = flag.Bool("update", false, "rewrite the golden files of testdata/golden")

// goldenKartas are the Kartas whose `karta compile` output is pinned.
var goldenKartas = []struct {
	golden string
	karta  string
	desc   string
}{
	{"pytorchjob.lua", examplePyTorchJob, "the example PyTorchJob: templates, scale, suspend, a byConditions+byExpression matcher"},
	{"jobset.lua", filepath.Join(progProgramDir, "jobset.karta.yaml"), "a JobSet with instances and any(g; f), translated as gojq defines it"},
	{"inferenceservice.lua", filepath.Join(progProgramDir, "inferenceservice.karta.yaml"), "a fragmented KServe-like predictor and a guarded transformer"},
	{"workflow.lua", filepath.Join(progProgramDir, "workflow.karta.yaml"), "a phase and byExpressions with quotes, backslashes and ]] in them"},
	{"deployment.lua", filepath.Join(progProgramDir, "deployment.karta.yaml"), "a root pod-bearing component and a luaScript override"},
}

func goldenSource(t *testing.T, kartaFile string) string {
	t.Helper()
	p := progCompile(t, progKartaFile(t, kartaFile), Options{})
	return p.Source()
}

// TestCodegenGolden pins Program.Source(), what `karta compile` prints.
func TestCodegenGolden(t *testing.T) {
	for _, g := range goldenKartas {
		t.Run(g.golden, func(t *testing.T) {
			got := goldenSource(t, g.karta)
			path := filepath.Join("testdata", "golden", g.golden)
			if *updateGoldens {
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "missing golden file; run with -update to create it")
			assert.Equal(t, string(want), got, "%s: %s changed; review the diff and run with -update", g.golden, g.desc)
		})
	}
}

// TestCodegenDeterministic compiles each golden Karta several times, each
// from a fresh load: the source must be byte-identical every time.
func TestCodegenDeterministic(t *testing.T) {
	for _, g := range goldenKartas {
		first := goldenSource(t, g.karta)
		for range 4 {
			require.Equal(t, first, goldenSource(t, g.karta), g.karta)
		}
	}
}

var accessorDef = regexp.MustCompile(`^(\s*)Q\[(\d+)\] = function\(v, out\)$`)

// exprComment is how an accessor's comment shows its expression: each
// line of it after "-- ".
func exprComment(expr string) []string {
	lines := strings.Split(strings.TrimRight(expr, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("-- "+l, " ")
	}
	return lines
}

// TestCodegenAccessorsAndComments: the generated chunk compiles with
// gopher-lua (Compile would refuse the Karta otherwise), every accessor
// follows a comment holding its jq expression, every jq expression of the
// Karta has an accessor, and the hook comments name the right slots.
func TestCodegenAccessorsAndComments(t *testing.T) {
	kartas := map[string]*karta.Karta{
		"expressions": progKarta(t, expressionsKarta("expressions", diffExpressions)),
		"multiline":   progKarta(t, multilineKarta),
	}
	for _, g := range goldenKartas {
		kartas[g.golden] = progKartaFile(t, g.karta)
	}
	for name, k := range kartas {
		t.Run(name, func(t *testing.T) {
			p, err := Compile(k, Options{})
			require.NoError(t, err)
			require.NoError(t, p.buildLua(), "the generated chunk compiles")

			// The chunk parses with gopher-lua on its own, too.
			chunk, err := parse.Parse(strings.NewReader(p.gen.source), "generated")
			require.NoError(t, err)
			_, err = lua.Compile(chunk, "generated")
			require.NoError(t, err)

			exprOf := map[int]string{}
			for e, slot := range p.gen.slots {
				exprOf[slot] = e
			}
			lines := strings.Split(p.gen.source, "\n")
			defined := map[int]bool{}
			for i, line := range lines {
				m := accessorDef.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				slot, _ := strconv.Atoi(m[2])
				expr, ok := exprOf[slot]
				require.True(t, ok, "Q[%d] is not an accessor of any expression", slot)
				// An accessor with local helpers sits in a do block; the
				// comment is above the block.
				start := i
				if m[1] != "" {
					for start > 0 && lines[start] != "do" {
						start--
					}
				}
				j := start
				for j > 0 && strings.HasPrefix(lines[j-1], "--") {
					j--
				}
				block := make([]string, 0, start-j)
				for _, l := range lines[j:start] {
					block = append(block, strings.TrimRight(l, " "))
				}
				want := exprComment(expr)
				if assert.GreaterOrEqual(t, len(block), len(want), "the comment above Q[%d]: %q", slot, block) {
					assert.Equal(t, want, block[:len(want)], "the comment above Q[%d] is its expression", slot)
					for _, extra := range block[len(want):] {
						assert.True(t, strings.HasPrefix(extra, "-- runs on gojq: "), "Q[%d]: only a fallback note follows the expression: %q", slot, extra)
					}
				}
				assert.False(t, defined[slot], "Q[%d] defined twice", slot)
				defined[slot] = true
			}
			assert.Len(t, defined, len(p.gen.slots), "one accessor per distinct expression")

			for _, ref := range collectPaths(k) {
				slot, ok := p.gen.slots[ref.expr]
				if assert.True(t, ok, "%s: %q has no accessor", ref.field, ref.expr) {
					assert.True(t, defined[slot], "%s: Q[%d] is defined", ref.field, slot)
				}
			}

			// Hook comments: "--   Q[n]   field: expr" with n the slot of expr.
			hookRef := regexp.MustCompile(`^--   Q\[(\d+)\]\s+(\S+): (.*)$`)
			refs := 0
			for _, line := range lines {
				m := hookRef.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				refs++
				slot, _ := strconv.Atoi(m[1])
				assert.Equal(t, m[3], oneLine(exprOf[slot]), "%s names Q[%d]", m[2], slot)
			}
			goSide := false
			for _, ref := range collectPaths(k) {
				goSide = goSide || ref.podSpecs || ref.pods || ref.writes || ref.suspend
			}
			assert.Equal(t, goSide, refs > 0, "the Go-side hooks list the paths they evaluate")

			// The status matchers are written out: every status word with
			// matchers appears, in precedence order.
			last := -1
			for _, sm := range k.Spec.StructureDefinition.RootComponent.StatusDefinition.StatusMappings.InPrecedence() {
				if len(sm.Matchers) == 0 {
					continue
				}
				i := strings.Index(p.gen.source, "matched[#matched + 1] = \""+string(sm.Status)+"\"")
				if assert.Positive(t, i, sm.Status) {
					assert.Greater(t, i, last, "%s in precedence order", sm.Status)
					last = i
				}
			}
		})
	}
}

// multilineKarta writes its expressions over several lines (YAML block
// scalars), with a jq comment.
var multilineKarta = `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: multiline}
spec:
  structureDefinition:
    rootComponent:
      name: root
      kind: {group: example.com, version: v1, kind: Thing}
      specDefinition:
        podTemplateSpecPath: |
          .spec
          | .template # the pod template
      statusDefinition:
        statusMappings:
          running:
          - byExpression:
              expression: |
                [.status.conditions[]?
                 | select(.type == "Ready")]
                | length
              expectedResult: "1"
`

// TestCodegenMultilineExpression: an expression written over several lines
// (a YAML block scalar) compiles, and its comments stay single lines.
func TestCodegenMultilineExpression(t *testing.T) {
	p := progFrom(t, multilineKarta)
	src := p.Source()
	// Accessor comments keep the lines of the expression; the comments of
	// the hooks fold it onto one line.
	assert.Contains(t, src, "-- .spec\n-- | .template # the pod template\nQ[1] = function(v, out)\n")
	assert.Contains(t, src, "--   Q[1]   root.podTemplateSpecPath: .spec | .template # the pod template\n")
	assert.Contains(t, src, `--[[ [.status.conditions[]? | select(.type == "Ready")] | length ]]`)
	res, err := p.InterpretStatus(t.Context(), progObj(t, `
apiVersion: example.com/v1
kind: Thing
metadata: {name: x, namespace: ns}
status: {conditions: [{type: Ready, status: "True"}]}`))
	require.NoError(t, err)
	assert.Equal(t, "Running", string(res.Status))
}
