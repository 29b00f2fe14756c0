package luaapi

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/srcbound"
)

// A chunk nested past the limit, or larger than the size limit, is refused
// before gopher-lua parses it, by Compile, CompileWith and InspectChunk,
// with a *SourceLimitError naming the chunk, the line and the limit.
func TestSourceLimits(t *testing.T) {
	deep := "x = 1\nreturn " + strings.Repeat("not ", 1_000_000) + "true"
	for name, run := range map[string]func(string) error{
		"Compile":      func(s string) error { _, err := Compile("script:deep.lua", s); return err },
		"InspectChunk": func(s string) error { _, err := InspectChunk("script:deep.lua", s); return err },
		"CompileWith": func(s string) error {
			_, err := CompileWith("script:deep.lua", s, Limits{MaxSourceSize: 8 << 20})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			var le *SourceLimitError
			err := run(deep)
			require.ErrorAs(t, err, &le)
			if name == "CompileWith" {
				assert.Equal(t, srcbound.KindNesting, le.Kind)
				assert.EqualError(t, err, "script:deep.lua: line 2: nesting depth exceeds the limit 200")
			} else {
				assert.Equal(t, srcbound.KindSourceSize, le.Kind, "4 MB is past the 1 MiB default")
			}
			assert.Equal(t, "script:deep.lua", le.Name)
		})
	}

	shallow := "return " + strings.Repeat("(", 30) + "1" + strings.Repeat(")", 30)
	_, err := Compile("c", shallow)
	require.NoError(t, err)
	_, err = CompileWith("c", shallow, Limits{MaxNesting: 20})
	var le *SourceLimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, 20, le.Limit)
}
