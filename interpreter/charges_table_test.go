package interpreter

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/internal/third_party/gojq"
	"github.com/kartalua/karta/karmada/kube"
)

// chargesDoc is the checked-in table of what every function a script or a
// jq expression can call is charged (issue 28).
var chargesDoc = filepath.Join("..", "docs", "charges.md")

// chargeRow is a row of the table: "| `name` | charge |".
var chargeRow = regexp.MustCompile("^\\| `([^`]+)` \\|")

// chargeRows reads the names of the rows of the table's section headed
// heading (up to the next "## ").
func chargeRows(t *testing.T, heading string) []string {
	t.Helper()
	data, err := os.ReadFile(chargesDoc)
	require.NoError(t, err)
	var rows []string
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "## ") {
			in = strings.TrimSpace(strings.TrimPrefix(line, "## ")) == heading
			continue
		}
		if m := chargeRow.FindStringSubmatch(line); in && m != nil {
			rows = append(rows, m[1])
		}
	}
	sort.Strings(rows)
	require.NotEmpty(t, rows, "section %q of %s", heading, chargesDoc)
	return rows
}

// sandboxFunctions lists every function the sandbox of a Karta's state
// holds, and Karmada's kube module's: globals by name, library and module
// functions as lib.name (read through the read-only proxies), the guard
// functions by their names. The Karta's own generated hooks
// (karta.generated) are its code, not the library's.
func sandboxFunctions(t *testing.T) []string {
	t.Helper()
	k := progKartaFile(t, filepath.Join(progProgramDir, "deployment.karta.yaml"))
	p := progCompile(t, k, Options{PoolSize: 1})
	sd, err := p.newState()
	require.NoError(t, err)
	defer sd.L.Close()
	L := sd.L
	var names []string
	var lib func(prefix string, t *lua.LTable)
	lib = func(prefix string, tb *lua.LTable) {
		if mt, ok := tb.Metatable.(*lua.LTable); ok {
			if target, ok := mt.RawGetString("__index").(*lua.LTable); ok {
				tb = target
			}
		}
		tb.ForEach(func(k, v lua.LValue) {
			name := prefix + k.String()
			switch v := v.(type) {
			case *lua.LFunction:
				names = append(names, name)
			case *lua.LTable:
				if name != "karta.generated" && prefix == "" {
					lib(name+".", v)
				}
			}
		})
	}
	lib("", L.G.Global)
	lib("kube.", kube.Module.Open(L).(*lua.LTable))
	sort.Strings(names)
	return slices.Compact(names)
}

// jqBuiltins lists the names of the builtins gojq defines, as its own
// builtins function lists them.
func jqBuiltins(t *testing.T) []string {
	t.Helper()
	q, err := gojq.Parse(`builtins | map(split("/")[0]) | unique`)
	require.NoError(t, err)
	code, err := gojq.Compile(q)
	require.NoError(t, err)
	v, ok := code.RunWithContext(context.Background(), nil).Next()
	require.True(t, ok)
	var names []string
	for _, n := range v.([]any) {
		names = append(names, n.(string))
	}
	return names
}

// TestChargeTableIsComplete: every function reachable in the sandbox and
// every jq builtin has a row in docs/charges.md saying what it is charged,
// and every row names one that exists. A function added to the sandbox,
// or a builtin a newer gojq brings, fails here until its charge is
// decided.
func TestChargeTableIsComplete(t *testing.T) {
	for _, tc := range []struct {
		heading string
		actual  []string
	}{
		{"Lua functions", sandboxFunctions(t)},
		{"jq builtins", jqBuiltins(t)},
	} {
		rows := chargeRows(t, tc.heading)
		var missing, extra []string
		for _, n := range tc.actual {
			if _, found := slices.BinarySearch(rows, n); !found {
				missing = append(missing, n)
			}
		}
		for _, r := range rows {
			if !slices.Contains(tc.actual, r) {
				extra = append(extra, r)
			}
		}
		assert.Empty(t, missing, "%s without a row in %s", tc.heading, chargesDoc)
		assert.Empty(t, extra, "rows of %s in %s that name nothing", tc.heading, chargesDoc)
	}
}
