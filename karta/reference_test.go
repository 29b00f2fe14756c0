package karta_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/yamlerr"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

const referenceDoc = "../docs/reference.md"

// apiFields are the JSON names of every field of the API types
// (types.go), read from their struct tags.
func apiFields(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "types.go", nil, 0)
	require.NoError(t, err)
	seen := map[string]bool{}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		st, ok := n.(*ast.StructType)
		if !ok {
			return true
		}
		for _, field := range st.Fields.List {
			if field.Tag == nil {
				continue
			}
			tag, err := strconv.Unquote(field.Tag.Value)
			require.NoError(t, err)
			name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
			if name != "" && name != "-" && !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
		return true
	})
	return out
}

// docs/reference.md names every field of the API, so that it cannot fall
// behind the types.
func TestReferenceNamesEveryField(t *testing.T) {
	doc, err := os.ReadFile(referenceDoc)
	require.NoError(t, err)
	fields := apiFields(t)
	require.Greater(t, len(fields), 80, "the fields were found")
	var missing []string
	for _, name := range fields {
		if !strings.Contains(string(doc), "`"+name+"`") {
			missing = append(missing, name)
		}
	}
	assert.Empty(t, missing, "docs/reference.md does not name these fields (as `name`)")
}

// The YAML of docs/reference.md is YAML, and each Karta in it loads and
// validates without an error.
func TestReferenceKartasValidate(t *testing.T) {
	doc, err := os.ReadFile(referenceDoc)
	require.NoError(t, err)
	blocks := strings.Split(string(doc), "```yaml\n")[1:]
	require.NotEmpty(t, blocks)
	kartas := 0
	for i, b := range blocks {
		b = b[:strings.Index(b, "```")]
		_, err := yamlerr.Parse([]byte(b), "reference.md")
		require.NoError(t, err, "block %d", i+1)
		if !strings.Contains(b, "kind: Karta\n") {
			continue
		}
		ks, err := karta.Load([]byte(b), "reference.md")
		require.NoError(t, err, "block %d", i+1)
		for _, k := range ks {
			problems := karta.ValidateWithOptions(k, interpreter.ValidateOptions())
			assert.Empty(t, problems.Errors(), "block %d: %q", i+1, k.Name)
			kartas++
		}
	}
	assert.GreaterOrEqual(t, kartas, 2)
}
