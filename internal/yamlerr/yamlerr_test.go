package yamlerr_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/yamlerr"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/object"
)

func TestFormat(t *testing.T) {
	assert.Equal(t, "f.yaml: m", yamlerr.Format("f.yaml", 0, 0, "", "m"))
	assert.Equal(t, "f.yaml:3: m", yamlerr.Format("f.yaml", 3, 0, "", "m"))
	assert.Equal(t, "f.yaml:3: document 2: spec.x: m", yamlerr.Format("f.yaml", 3, 2, "spec.x", "m"))
	assert.Equal(t, "f.yaml: document 2: a\\nb", yamlerr.Format("f.yaml", 0, 2, "", "a\nb"), "one line per problem")
	assert.Equal(t, "<input>: m", yamlerr.Format("", 0, 0, "", "m"))
	e := &yamlerr.Error{Source: "f.yaml", Line: 4, Document: 1, Message: "m"}
	assert.Equal(t, "f.yaml:4: m", e.Error(), "a single document is not named")
	e.MultiDoc = true
	assert.Equal(t, "f.yaml:4: document 1: m", e.Error())
}

func TestSplit(t *testing.T) {
	for text, want := range map[string]struct {
		line int
		msg  string
	}{
		"yaml: line 5: mapping values are not allowed in this context":                             {5, "mapping values are not allowed in this context"},
		"yaml: line 4: did not find expected ',' or ']'":                                           {5, "did not find expected ',' or ']'"},
		"yaml: did not find expected node content":                                                 {1, "did not find expected node content"},
		"error converting YAML to JSON: yaml: line 7: found character that cannot start any token": {7, "found character that cannot start any token"},
		"yaml: unmarshal errors":                                                                   {0, "unmarshal errors"},
	} {
		line, msg := yamlerr.Split(text)
		assert.Equal(t, want.line, line, text)
		assert.Equal(t, want.msg, msg, text)
	}
}

// The same broken input gives the same problem, at the same line, to
// every reader: a Karta's loader, the object decoder, the value decoder
// (revisions) and Parse (what readers built on sigs.k8s.io/yaml call
// first).
func TestEveryReaderAgrees(t *testing.T) {
	for name, tc := range map[string]struct {
		in   string
		want string
	}{
		"unclosed flow list":     {"apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  labels: [a, b\nspec: {}\n", "in.yaml:5: invalid YAML: did not find expected ',' or ']'"},
		"bad indentation":        {"apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n   bad: indent\n", "in.yaml:5: invalid YAML: mapping values are not allowed in this context"},
		"tab indentation":        {"apiVersion: v1\nkind: Pod\nspec:\n\tx: 1\n", "in.yaml:4: invalid YAML: found character that cannot start any token"},
		"unclosed quote":         {"kind: Pod\nmetadata: {name: \"x}\n", "in.yaml:2: invalid YAML: found unexpected end of stream"},
		"on line 1":              {"[a, b\n", "in.yaml:2: invalid YAML: did not find expected ',' or ']'"},
		"not UTF-8":              {"kind: Pod\nname: \xff\n", "in.yaml:2: input is not valid UTF-8 (byte offset 16); save the file as UTF-8"},
		"a control character":    {"kind: Pod\n\x07: x\n", "in.yaml:2: input contains the control character U+0007 (byte offset 10), which YAML does not allow; remove it"},
		"in the second document": {"kind: Pod\n---\nkind: Pod\nmetadata:\n  labels: [a, b\nspec: {}\n", "in.yaml:5: document 2: invalid YAML: did not find expected ',' or ']'"},
		"first of several":       {"kind: Pod\nmetadata:\n  labels: [a, b\nspec: {}\n---\nkind: Pod\n", "in.yaml:3: document 1: invalid YAML: did not find expected ',' or ']'"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := yamlerr.Parse([]byte(tc.in), "in.yaml")
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error(), "Parse")

			_, err = object.Decode([]byte(tc.in), "in.yaml")
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error(), "object.Decode")

			if !strings.Contains(tc.in, "---") {
				_, err = object.DecodeValue([]byte(tc.in), "in.yaml")
				require.Error(t, err)
				assert.Equal(t, tc.want, err.Error(), "object.DecodeValue")
			}

			_, err = karta.Load([]byte(tc.in), "in.yaml")
			var les karta.LoadErrors
			require.True(t, errors.As(err, &les), "karta.Load: %v", err)
			last := les[len(les)-1] // after the problems of the documents before it
			assert.Equal(t, tc.want, last.Error(), "karta.Load")
		})
	}
}

func TestParsePath(t *testing.T) {
	assert.Equal(t, []yamlerr.Step{{Key: "spec"}, {Key: "containers"}, {Index: 0, IsIndex: true}, {Key: "image"}},
		yamlerr.ParsePath("spec.containers[0].image"))
	assert.Equal(t, []yamlerr.Step{{Key: "metadata"}, {Key: "labels"}, {Key: "a.b/c"}, {Key: "x]"}},
		yamlerr.ParsePath(`metadata.labels["a.b/c"]["x]"]`))
	assert.Equal(t, []yamlerr.Step{{Key: "data"}, {Key: "key.with.dots"}}, yamlerr.ParsePath("data[key.with.dots]"))
	assert.Empty(t, yamlerr.ParsePath(""))
}

func TestLinesField(t *testing.T) {
	in := "# a comment\nkind: A\nspec:\n  list:\n  - name: a\n  - name: b\n    x: 1\n---\n---\nkind: B\nspec:\n  base: &b {y: 2}\n  merged:\n    <<: *b\n"
	l := yamlerr.NewLines([]byte(in))
	assert.Equal(t, 7, l.Field(1, "spec.list[1].x"))
	assert.Equal(t, 6, l.Field(1, "spec.list[1].missing"), "the deepest part that is there")
	assert.Equal(t, 3, l.Field(1, "spec"))
	assert.Equal(t, 12, l.Field(2, "spec.merged.y"), "a merged key is where it is written")
	assert.Equal(t, 0, l.Field(3, "spec"), "empty documents are not counted")
	assert.Equal(t, 0, yamlerr.NewLines([]byte("a: [")).Field(1, "a"), "an input that does not parse locates nothing")
}
