package helm

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	yamlv3 "go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite the values table of charts/karta/README.md from values.yaml")

// The markers around the values table in the chart's README.
const (
	valuesStart = "<!-- values: generated from values.yaml by `cd test/helm && go test -run TestValuesDocumented -update`; do not edit -->\n"
	valuesEnd   = "<!-- end of values -->\n"
)

// value is one documented value of values.yaml: a key whose comment starts
// with "-- ".
type value struct {
	path, def, doc string
}

// documentedValues walks values.yaml. A value is documented by a comment
// starting with "# --" above its key (what helm-docs reads); every key must
// be documented itself or be a map whose keys all are, so that no value
// goes without a line in the README.
func documentedValues(t *testing.T) []value {
	t.Helper()
	var doc yamlv3.Node
	require.NoError(t, yamlv3.Unmarshal(readRepoFile(t, "charts/karta/values.yaml"), &doc))
	var out []value
	var walk func(prefix string, m *yamlv3.Node)
	walk = func(prefix string, m *yamlv3.Node) {
		require.Equal(t, yamlv3.MappingNode, m.Kind, "%s is a map", prefix)
		for i := 0; i < len(m.Content); i += 2 {
			k, v := m.Content[i], m.Content[i+1]
			path := strings.TrimPrefix(prefix+"."+k.Value, ".")
			text, documented := docComment(k.HeadComment)
			if !documented {
				if v.Kind != yamlv3.MappingNode || len(v.Content) == 0 {
					t.Errorf("values.yaml: %s has no \"# -- \" comment", path)
					continue
				}
				walk(path, v)
				continue
			}
			var val any
			require.NoError(t, v.Decode(&val))
			def, err := json.Marshal(val)
			require.NoError(t, err)
			out = append(out, value{path: path, def: string(def), doc: text})
		}
	}
	walk("", doc.Content[0])
	return out
}

// docComment returns the text of a "# -- text" comment, continued by the
// comment lines after it.
func docComment(head string) (string, bool) {
	lines := strings.Split(head, "\n")
	for i, l := range lines {
		if first, ok := strings.CutPrefix(l, "# -- "); ok {
			parts := []string{first}
			for _, more := range lines[i+1:] {
				parts = append(parts, strings.TrimSpace(strings.TrimPrefix(more, "#")))
			}
			return strings.Join(parts, " "), true
		}
	}
	return "", false
}

// valuesTable renders the README's table of values.
func valuesTable(vals []value) string {
	var b bytes.Buffer
	b.WriteString("| Value | Default | Description |\n|---|---|---|\n")
	for _, v := range vals {
		def := "`" + v.def + "`"
		if len(v.def) > 60 {
			def = "see `values.yaml`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", v.path, def, strings.ReplaceAll(v.doc, "|", `\|`))
	}
	return b.String()
}

// Every value of values.yaml is documented there and listed in the chart's
// README, with its default: the README's table is generated from
// values.yaml, and -update rewrites it.
func TestValuesDocumented(t *testing.T) {
	vals := documentedValues(t)
	require.NotEmpty(t, vals)
	readmePath := filepath.Join(chartPath, "README.md")
	readme := string(readRepoFile(t, "charts/karta/README.md"))
	before, rest, ok := strings.Cut(readme, valuesStart)
	require.True(t, ok, "charts/karta/README.md has the values marker")
	_, after, ok := strings.Cut(rest, valuesEnd)
	require.True(t, ok, "charts/karta/README.md has the end of values marker")
	want := before + valuesStart + valuesTable(vals) + valuesEnd + after
	if *update {
		require.NoError(t, os.WriteFile(readmePath, []byte(want), 0o644))
		return
	}
	assert.Equal(t, want, readme, "the values table of charts/karta/README.md is out of date: cd test/helm && go test -run TestValuesDocumented -update")
}

// Each value the README lists is one the templates read: a value nothing
// uses would be documented and do nothing.
func TestValuesUsed(t *testing.T) {
	var templates bytes.Buffer
	files, err := filepath.Glob(filepath.Join(chartPath, "templates", "*"))
	require.NoError(t, err)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		templates.Write(data)
	}
	for _, v := range documentedValues(t) {
		assert.Contains(t, templates.String(), ".Values."+v.path, "no template reads %s", v.path)
	}
}
