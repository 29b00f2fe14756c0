package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/heapwatch"
)

// Hostile sources through the command line (issue 28): a Karta whose
// luaScript or jq expression is nested a hundred thousand deep once
// crashed gopher-lua's compiler or the jq checker with Go's unrecoverable
// stack overflow, after hundreds of MiB. Each is now refused before it is
// parsed, in one line naming the file and the limit, cheaply.

// sourceBudget is the bar for any input: 5 s of CPU and 256 MiB.
const (
	sourceCPU    = 5 * time.Second
	sourceMemory = 256 << 20
)

// hostileKartas are the PyTorchJob Karta with a deep Lua override or jq
// expression.
func hostileKartas(t *testing.T) map[string]string {
	data, err := os.ReadFile(pytorchKarta)
	require.NoError(t, err)
	k := string(data)
	expr := `'[.status.conditions[]? | select(.status == "True" and .type != "Created")] | length'`
	require.Contains(t, k, expr)
	withExpr := func(e string) string { return strings.Replace(k, expr, "'"+e+"'", 1) }
	withScript := func(s string) string {
		return strings.Replace(k, "spec:\n", "spec:\n  luaScript: |\n    "+s+"\n", 1)
	}
	const n = 100_000
	return map[string]string{
		"jq parentheses": withExpr(strings.Repeat("(", n) + "." + strings.Repeat(")", n)),
		"jq minus":       withExpr(strings.Repeat("-", n) + "1"),
		"jq brackets":    withExpr(strings.Repeat("[", n) + strings.Repeat("]", n)),
		"jq in Lua":      withScript(`function InterpretStatus(obj) return jq("` + strings.Repeat("[", n) + `", obj) end`),
		"lua unary":      withScript("x = " + strings.Repeat("- ", n) + "1"),
		"lua not":        withScript("x = " + strings.Repeat("not ", n) + "1"),
		"lua parens":     withScript("x = " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n)),
		"lua tables":     withScript("x = " + strings.Repeat("{", n) + strings.Repeat("}", n)),
		"lua functions":  withScript(strings.Repeat("function f() ", n/10) + strings.Repeat("end ", n/10)),
		"lua concat":     withScript("x = 'a'" + strings.Repeat("..'a'", n)),
		"lua size":       withScript("x = 1" + strings.Repeat(" ", 2<<20)),
	}
}

func TestHostileSources(t *testing.T) {
	dir := t.TempDir()
	for name, data := range hostileKartas(t) {
		t.Run(name, func(t *testing.T) {
			file := writeFile(t, dir, strings.ReplaceAll(name, " ", "-")+".yaml", []byte(data))
			want := "nesting depth exceeds the limit 200"
			if name == "lua size" {
				want = "source size"
			}
			for _, args := range [][]string{
				{"validate", file},
				{"pods", "-k", file, "-f", "../../examples/pytorchjob/running.yaml"},
				{"status", "-k", file, "-f", "../../examples/pytorchjob/running.yaml"},
			} {
				if name == "jq in Lua" && args[0] != "status" {
					continue // the expression is a script's argument: it is checked when the script runs it
				}
				var stdout, stderr string
				var code int
				cost := heapwatch.Measure(func() { stdout, stderr, code = runCLI(t, "", args...) })
				assert.Equal(t, exitInvalid, code, "%s: %s", args[0], stderr)
				assert.Empty(t, stdout, args[0])
				assert.Contains(t, stderr, want, args[0])
				assert.NotContains(t, stderr, "goroutine ", args[0])
				assert.Less(t, cost.CPU, sourceCPU, args[0])
				assert.Less(t, cost.Growth, uint64(sourceMemory), args[0])
			}
		})
	}
}

// TestHostileInputSizes: object and Karta files whose decoded trees would
// grow far faster than their text (10 MB of empty objects: 650 MiB and 9 s
// in status; 8 MB in a Karta: 840 MiB and 22 s; 50 000 documents) are
// refused in one line before they are decoded.
func TestHostileInputSizes(t *testing.T) {
	dir := t.TempDir()
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: d}\nspec: {}\n"
	karta := "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata: {name: x}\nspec: {}\n"
	empties := writeFile(t, dir, "empties.json", []byte("["+strings.Repeat("{},", 3_300_000)+"{}]"))
	docs := writeFile(t, dir, "docs.yaml", []byte(strings.Repeat(pod+"---\n", 50_000)))
	kEmpties := writeFile(t, dir, "karta-empties.yaml", []byte("apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata: {name: x}\nspec: {x: ["+strings.Repeat("{},", 2_600_000)+"{}]}\n"))
	kDocs := writeFile(t, dir, "karta-docs.yaml", []byte(strings.Repeat(karta+"---\n", 50_000)))
	for _, args := range [][]string{
		{"status", "-k", pytorchKarta, "-f", empties},
		{"pods", "-k", pytorchKarta, "-f", empties},
		{"status", "-k", pytorchKarta, "-f", docs},
		{"validate", kEmpties},
		{"validate", kDocs},
		{"status", "-k", kEmpties, "-f", "../../examples/pytorchjob/running.yaml"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr string
			var code int
			cost := heapwatch.Measure(func() { stdout, stderr, code = runCLI(t, "", args...) })
			assert.Equal(t, exitInvalid, code, stderr)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, "more than the")
			assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
			assert.Less(t, cost.CPU, sourceCPU)
			assert.Less(t, cost.Growth, uint64(sourceMemory))
		})
	}
}
