package object

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzDecode feeds arbitrary bytes to the CLI's object decoder. Whatever
// they are: no panic, and an error names the source on one line; a
// decoded document nests at most MaxDepth levels, and its JSON and YAML
// renderings decode back to the same object.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		pytorchJob,
		"{\"kind\": \"Pod\", \"n\": 12345678901234567890, \"f\": 1.50, \"e\": 1e3}\n",
		"---\n# empty\n---\nkind: Pod\nx: 0x10\ny: 1_000\nz: .inf\n---\n",
		"a: &x {b: [1, 2, *y]}\n",
		"a: &x {b: 1}\nc: *x\nd: [*x, *x]\n",
		"a: &x {b: 1}\nc:\n  <<: *x\n",
		"spec: &s {a: *s}\n",
		"a: &a [x, x, x, x]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nd: [*c, *c, *c, *c]\n",
		"k: !!binary aGVsbG8=\nt: 2001-12-14t21:59:43.10-05:00\nq: !custom x\nn: ~\nb: yes\n",
		"a: 1\na: 2\n",
		"? [a]\n: 1\n",
		"- a\n- b\n",
		"key: \"\\u0000\\ud800 \\t\"\nother: '''quoted'''\n",
		strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth),
		"x: " + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := Decode(data, "fuzz.yaml")
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "fuzz.yaml"), "the error names the source: %v", err)
			return
		}
		require.NotEmpty(t, docs)
		for _, d := range docs {
			require.LessOrEqual(t, depthOf(d.Object), MaxDepth+1)

			js, err := d.JSON()
			require.NoError(t, err)
			dec := json.NewDecoder(bytes.NewReader(js))
			dec.UseNumber()
			var back any
			require.NoError(t, dec.Decode(&back), "JSON() is JSON: %s", js)
			require.True(t, reflect.DeepEqual(any(d.Object), back), "JSON() gives the object back\n%s", js)

			y, err := d.YAML()
			require.NoError(t, err)
			again, err := Decode(y, "again.yaml")
			require.NoError(t, err, "YAML() decodes:\n%s", y)
			require.Len(t, again, 1)
			require.True(t, reflect.DeepEqual(d.Object, again[0].Object), "YAML() gives the object back\n%s", y)
		}
	})
}

func depthOf(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	case []any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	}
	return 0
}
