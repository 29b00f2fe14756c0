package interpreter

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/internal/heapwatch"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/luaapi"
)

// The hostile-jq suite, beside the hostile-script suite: jq written by
// another team must not hold the process either. gojq runs a builtin to
// completion in Go, so before the metered fork these expressions took
// seconds and gigabytes inside one call. Each family runs as a Karta's
// byExpression (through the hook's evaluator and its gojq back end) and as a
// script's jq(expr, obj); each must end within twice the deadline, grow
// the live heap by less than 64 MiB, and fail with a limit naming the
// Karta and the hook, leaving the Program and a bystander healthy.

// shared is a value that shares subtrees: 4^12 copies of the object in 12
// small arrays. Walking it as jq sees it visits 16 million objects.
var shared = strings.Repeat("[.,.,.,.] | ", 12)

// times40 is forty outputs, for reduce loops that double their state.
var times40 = strings.TrimSuffix(strings.Repeat("1,", 40), ",")

var hostileJQ = []struct{ name, expr string }{
	{"string repetition", `"x" * 100000000`},
	{"string repetition, caught", `try ("x" * 100000000) catch "caught"`},
	{"string repetition, alternative", `("x" * 100000000) // 1`},
	{"string doubling", `reduce (` + times40 + `) as $x ("ab"; . + .)`},
	{"array doubling", `reduce (` + times40 + `) as $x ([1]; . + .)`},
	{"array collecting", `reduce (` + times40 + `) as $x ([1]; [.[], .[]])`},
	{"object growing", `reduce (` + times40 + `) as $x ({}; . + {(tostring): .})`},
	{"tojson", shared + `tojson`},
	{"tostring", shared + `tostring`},
	{"string interpolation", shared + `"\(.)"`},
	{"@base64", shared + `@base64`},
	{"@json", shared + `@json`},
	{"@text", shared + `@text`},
	{"@html", shared + `@html`},
	{"@csv", shared + `map(tojson) | @csv`},
	{"flatten", shared + `flatten`},
	{"equality", shared + `. == .`},
	{"order", shared + `. < .`},
	{"sort", shared + `sort`},
	{"unique", shared + `unique`},
	{"group_by", shared + `group_by(.)`},
	{"min", shared + `min`},
	{"contains", shared + `contains(.)`},
	{"array subtraction", shared + `. - .`},
	{"deep merge", strings.Repeat("{a: ., b: .} | ", 20) + `. * .`},
	{"add", shared + `add`},
	{"join", `reduce (` + times40 + `) as $x (["abcdefgh"]; . + .) | join(",")`},
	{"implode", `reduce (` + times40 + `) as $x ([65]; . + .) | implode`},
	{"explode", `reduce (` + times40 + `) as $x ("ab"; . + .) | explode`},
	{"ascii_downcase", `reduce (` + times40 + `) as $x ("Ab"; . + .) | ascii_downcase`},
	{"split", `reduce (` + times40 + `) as $x ("a,"; . + .) | split(",")`},
	{"gsub", `reduce (` + times40 + `) as $x ("a"; . + .) | gsub("a"; "aaaa")`},
	{"to_entries", shared + `to_entries`},
	{"error message", shared + `error`},
	{"indices", shared + `indices(.)`},
	{"nested iteration", `[.[]?, .[]?] | [.[], .[], .[], .[]] | [.[], .[], .[], .[]] | [.[] as $a | .[] as $b | .[] | [$a, $b]]`},
}

// hostileJQTimeout and the memory guard: as the hostile-script suite's.
func hostileJQLimits() Options {
	return Options{PoolSize: 1, Limits: Limits{Timeout: hostileTimeout, MaxMemory: hostileMemory}}
}

// jqKarta is the deployment Karta with a byExpression that runs expr on
// the object named "evil" only.
func jqKarta(t *testing.T, expr string) *karta.Karta {
	t.Helper()
	k := progKartaFile(t, filepath.Join(progProgramDir, "deployment.karta.yaml")).DeepCopy()
	k.Spec.LuaScript = ""
	sm := &k.Spec.StructureDefinition.RootComponent.StatusDefinition.StatusMappings
	sm.Completed = append(sm.Completed, karta.StatusMatcher{ByExpression: &karta.ExpressionMatcher{
		Expression:     fmt.Sprintf(`if .metadata.name == "evil" then (%s) else false end`, expr),
		ExpectedResult: "never",
	}})
	return k
}

func TestHostileJQ(t *testing.T) { testHostileJQ(t, hostileJQ) }

// testHostileJQ runs each expression as a Karta's byExpression and as a
// script's jq(...), and checks the limit that ends it and that the Program
// and a bystander stay healthy.
func testHostileJQ(t *testing.T, cases []struct{ name, expr string }) {
	base := progKartaFile(t, filepath.Join(progProgramDir, "deployment.karta.yaml"))
	good := progObjFile(t, filepath.Join(progProgramDir, "deployment.yaml"))[0]
	evil := good.DeepCopy()
	evil.SetName("evil")
	bystander := progCompile(t, base, Options{})
	want, err := bystander.InterpretStatus(context.Background(), good)
	require.NoError(t, err)

	for _, tc := range cases {
		for _, form := range []string{"karta", "script"} {
			t.Run(tc.name+"/"+form, func(t *testing.T) {
				var k *karta.Karta
				if form == "karta" {
					k = jqKarta(t, tc.expr)
				} else {
					k = withScript(base, fmt.Sprintf(hostileOverride, fmt.Sprintf("jq([==[%s]==], obj)", tc.expr)))
				}
				p := progCompile(t, k, hostileJQLimits())
				got, err := p.InterpretStatus(context.Background(), good)
				require.NoError(t, err, "the Karta works for a good object")
				if form == "karta" {
					assert.Equal(t, want, got)
				}
				checkHostileJQCall(t, p, evil)

				for range 2 {
					_, err := p.InterpretStatus(context.Background(), good)
					require.NoError(t, err, "the Program is healthy after the hostile call")
				}
				got, err = bystander.InterpretStatus(context.Background(), good)
				require.NoError(t, err, "another Karta is untouched")
				assert.Equal(t, want, got)
			})
		}
	}
}

// checkHostileJQCall runs InterpretStatus on evil and checks the limit.
func checkHostileJQCall(t *testing.T, p *Program, evil *unstructured.Unstructured) {
	t.Helper()
	var callErr error
	cost := measureCall(func() {
		_, callErr = p.InterpretStatus(context.Background(), evil)
	})
	heapwatch.AssertPrompt(t, cost, hostileTimeout)
	assert.Less(t, cost.Growth, uint64(hostileHeapGrowth), "heap growth during the call")
	var le *luaapi.LimitError
	require.ErrorAs(t, callErr, &le)
	assert.Contains(t, []luaapi.LimitKind{luaapi.KindMemory, luaapi.KindInstructions, luaapi.KindDeadline, luaapi.KindStringSize}, le.Kind, callErr.Error())
	assert.Equal(t, "deployment", le.Karta)
	assert.Equal(t, string(HookInterpretStatus), le.Hook)
	assert.Contains(t, callErr.Error(), `karta "deployment": InterpretStatus: `)
}
