package srcbound_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/internal/srcbound"
)

// realSources are the Lua chunks and jq expressions karta ships and
// conforms to: the built-in Kartas (every string is checked as jq, a
// luaScript as Lua), the generated Karmada customizations and Argo CD
// scripts, the overrides, and Karmada's own customizations.
func realSources(t *testing.T) (lua, jq map[string]string) {
	lua, jq = map[string]string{}, map[string]string{}
	roots := []string{"../../builtin/kartas", "../../scripts", "../../examples", "../../../shared/conformance/karmada"}
	for _, root := range roots {
		if _, err := os.Stat(root); err != nil {
			continue // ../shared is beside a worktree, not in a clone
		}
		require.NoError(t, filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			switch filepath.Ext(path) {
			case ".lua":
				lua[path] = string(data)
			case ".yaml", ".yml":
				for i, doc := range bytes.Split(data, []byte("\n---")) {
					var v any
					if yaml.Unmarshal(doc, &v) != nil {
						continue
					}
					collect(v, path+"#"+string(rune('0'+i%10)), "", lua, jq)
				}
			}
			return nil
		}))
	}
	return lua, jq
}

func collect(v any, at, key string, lua, jq map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			collect(x, at+"."+k, k, lua, jq)
		}
	case []any:
		for _, x := range v {
			collect(x, at+"[]", key, lua, jq)
		}
	case string:
		if key == "luaScript" || strings.Contains(v, "function ") {
			lua[at] = v
		} else {
			jq[at] = v
		}
	}
}

// needed is the least nesting limit that check accepts.
func needed(check func(limit int) error) int {
	lo, hi := 1, srcbound.DefaultMaxNesting
	if check(hi) != nil {
		return hi + 1
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if check(mid) == nil {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// Every real source passes with a third of the default nesting limit and a
// quarter of the default size (the generated Karmada customizations are the
// largest and deepest: 120 KB, 20 nested blocks).
func TestRealSourcesWithinLimits(t *testing.T) {
	lua, jq := realSources(t)
	require.Greater(t, len(lua), 50, "the Lua sources were found")
	require.Greater(t, len(jq), 200, "the jq expressions were found")
	deepest := func(srcs map[string]string, check func(src string, limit int) error) (int, string) {
		most, where := 0, ""
		for at, src := range srcs {
			assert.Less(t, len(src), srcbound.DefaultMaxSourceSize/4, at)
			if n := needed(func(limit int) error { return check(src, limit) }); n > most {
				most, where = n, at
			}
		}
		return most, where
	}
	n, at := deepest(lua, func(src string, limit int) error { return srcbound.Lua("c", src, 0, limit) })
	t.Logf("Lua: %d sources, the deepest needs %d (%s)", len(lua), n, at)
	assert.LessOrEqual(t, n, srcbound.DefaultMaxNesting/3)
	n, at = deepest(jq, func(src string, limit int) error { return srcbound.JQ(src, 0, limit) })
	t.Logf("jq: %d expressions, the deepest needs %d (%s)", len(jq), n, at)
	assert.LessOrEqual(t, n, srcbound.DefaultMaxNesting/4)
}
