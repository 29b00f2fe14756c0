package jqlua

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// builtinSeed is one jq expression of a built-in Karta with inputs it
// really runs on: the built-in's running example object and its first pod.
type builtinSeed struct {
	expr   string
	inputs [][]byte
	// vars are the variables the Karta's references bind ("$name").
	vars []string
}

// builtinSeeds reads every expression of the built-in Kartas, so that the
// differential fuzz test starts from exactly what karta ships. Expression
// fields are the Karta's *Path/*Paths fields, path, keyPath, idPath,
// expression and filters.
func builtinSeeds(tb testing.TB) []builtinSeed {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "builtin", "kartas", "*.yaml"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no built-in Kartas found: %v", err)
	}
	var seeds []builtinSeed
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		var doc any
		data, err := os.ReadFile(file)
		if err != nil {
			tb.Fatal(err)
		}
		if err := sigsyaml.Unmarshal(data, &doc); err != nil {
			tb.Fatalf("%s: %v", file, err)
		}
		exprs := map[string]bool{}
		collectExpressions(doc, "", exprs)
		vars := referenceVars(doc)
		inputs := exampleInputs(tb, name)
		sorted := make([]string, 0, len(exprs))
		for e := range exprs {
			sorted = append(sorted, e)
		}
		sort.Strings(sorted)
		for _, e := range sorted {
			seeds = append(seeds, builtinSeed{expr: e, inputs: inputs, vars: vars})
		}
	}
	return seeds
}

// referenceVars are the variables a Karta's spec.references bind, each
// reference's name with a "$".
func referenceVars(doc any) []string {
	spec, _ := doc.(map[string]any)["spec"].(map[string]any)
	refs, _ := spec["references"].([]any)
	var vars []string
	for _, r := range refs {
		if name, ok := r.(map[string]any)["name"].(string); ok {
			vars = append(vars, "$"+name)
		}
	}
	return vars
}

func isExpressionField(key string) bool {
	switch key {
	case "path", "keyPath", "idPath", "expression", "filters", "instanceIdPath":
		return true
	}
	return strings.HasSuffix(key, "Path") || strings.HasSuffix(key, "Paths")
}

func collectExpressions(v any, key string, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			collectExpressions(e, k, out)
		}
	case []any:
		for _, e := range x {
			collectExpressions(e, key, out)
		}
	case string:
		if isExpressionField(key) && x != "" {
			out[x] = true
		}
	}
}

// exampleInputs returns the JSON of a built-in's running example and of the
// first pod of its pods.yaml.
func exampleInputs(tb testing.TB, name string) [][]byte {
	dir := filepath.Join("..", "..", "examples", name)
	var out [][]byte
	if data, err := os.ReadFile(filepath.Join(dir, "running.yaml")); err == nil {
		if j, err := sigsyaml.YAMLToJSON(data); err == nil {
			out = append(out, j)
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "pods.yaml")); err == nil {
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if j, err := sigsyaml.YAMLToJSON(data); err == nil && json.Unmarshal(j, &list) == nil && len(list.Items) > 0 {
			out = append(out, list.Items[0])
		}
	}
	if len(out) == 0 {
		tb.Fatalf("built-in %s has no examples in %s", name, dir)
	}
	return out
}

// readsAny reports whether expr names one of the variables vars.
func readsAny(expr string, vars []string) bool {
	for _, v := range vars {
		if strings.Contains(expr, v) {
			return true
		}
	}
	return false
}

// TestBuiltinExpressionsTranslate: every expression the built-ins ship is
// in the translated subset (exports carry it), but those that read a
// reference: the translated subset has no variables (an export reads a
// reference's exportFallback instead).
func TestBuiltinExpressionsTranslate(t *testing.T) {
	for _, s := range builtinSeeds(t) {
		if readsAny(s.expr, s.vars) {
			continue
		}
		u := NewPortableUnit()
		q, err := gojq.Parse(s.expr)
		if err != nil {
			t.Errorf("%q: %v", s.expr, err)
			continue
		}
		if _, err = u.AddQuery(s.expr, q); err != nil {
			t.Errorf("%q: %v", s.expr, err)
		}
	}
}
