package interpreter

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"github.com/kartalua/karta/karta"
)

// updateGoldens rewrites testdata/golden/*.lua from the current source:
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

// TestGeneratedSourceNamesEveryPath: the generated part of the source
// compiles with gopher-lua, defines each generated hook as a call of
// karta.generated.<Hook>, in generatedHooks' order, lists every jq path
// of the Karta as a comment "--   FIELD: EXPR" (on one line) under a hook
// that evaluates it, and the statuses with matchers in precedence order.
func TestGeneratedSourceNamesEveryPath(t *testing.T) {
	kartas := map[string]*karta.Karta{
		"expressions": progKarta(t, expressionsKarta("expressions", diffExpressions)),
		"multiline":   progKarta(t, multilineKarta),
	}
	for _, g := range goldenKartas {
		kartas[g.golden] = progKartaFile(t, g.karta)
	}
	hookDef := regexp.MustCompile(`^function (\w+)\((.*)\)$`)
	for name, k := range kartas {
		t.Run(name, func(t *testing.T) {
			p, err := Compile(k, Options{})
			require.NoError(t, err)
			src := generatedSource(p.model)
			chunk, err := parse.Parse(strings.NewReader(src), "generated")
			require.NoError(t, err)
			_, err = lua.Compile(chunk, "generated")
			require.NoError(t, err)

			lines := strings.Split(src, "\n")
			var hooks []Hook
			for i, line := range lines {
				m := hookDef.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				hooks = append(hooks, Hook(m[1]))
				require.Greater(t, len(lines), i+2)
				assert.Equal(t, "  return karta.generated."+m[1]+"("+m[2]+")", lines[i+1])
				assert.Equal(t, "end", lines[i+2])
			}
			assert.Equal(t, generatedHooks(p.model), hooks)

			for _, ref := range collectPaths(k) {
				assert.Contains(t, src, "\n--   "+ref.field+": "+oneLine(ref.expr)+"\n", "%s is listed", ref.field)
			}

			last := -1
			for _, sm := range k.Spec.StructureDefinition.RootComponent.StatusDefinition.StatusMappings.InPrecedence() {
				if len(sm.Matchers) == 0 {
					continue
				}
				i := strings.Index(src, "\n--   "+string(sm.Status)+" if ")
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
// (a YAML block scalar) compiles, and its comments are single lines.
func TestCodegenMultilineExpression(t *testing.T) {
	p := progFrom(t, multilineKarta)
	src := p.Source()
	// The comments fold an expression onto one line.
	assert.Contains(t, src, "--   root.podTemplateSpecPath: .spec | .template # the pod template\n")
	assert.Contains(t, src, `--   Running if ([.status.conditions[]? | select(.type == "Ready")] | length) == "1"`+"\n")
	res, err := p.InterpretStatus(t.Context(), progObj(t, `
apiVersion: example.com/v1
kind: Thing
metadata: {name: x, namespace: ns}
status: {conditions: [{type: Ready, status: "True"}]}`))
	require.NoError(t, err)
	assert.Equal(t, "Running", string(res.Status))
}
