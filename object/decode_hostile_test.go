package object

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// laughs is the "billion laughs": nine levels of nine aliases, 9^9 values
// from half a kilobyte.
func laughs() string {
	var b strings.Builder
	b.WriteString("kind: Pod\na: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		refs := strings.TrimSuffix(strings.Repeat("*"+prev+", ", 9), ", ")
		fmt.Fprintf(&b, "%s: &%s [%s]\n", n, n, refs)
		prev = n
	}
	b.WriteString("spec: *i\n")
	return b.String()
}

func TestDecodeRefusesAliasBombs(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"billion laughs", laughs(), "x.yaml:3: aliases expand to too many values"},
		{"an alias inside its own anchor", "spec: &s {a: *s}\n", "nesting deeper than 200 levels"},
		{"a self-referencing list, twice per level", "spec: &s [*s, *s]\n", "x.yaml:1: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.in), "x.yaml")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			_, err = DecodeValue([]byte(tc.in), "x.yaml")
			require.Error(t, err, "DecodeValue (revisions) refuses it too")
		})
	}
}

// TestDecodeKeepsOrdinaryAliases: anchors used as templates, even a
// hundred times over, are fine.
func TestDecodeKeepsOrdinaryAliases(t *testing.T) {
	var b strings.Builder
	b.WriteString("kind: Pod\ntemplate: &t\n  containers:\n")
	for i := range 20 {
		fmt.Fprintf(&b, "  - {name: c%d, image: img, args: [a, b, c]}\n", i)
	}
	b.WriteString("copies:\n")
	for range 100 {
		b.WriteString("- *t\n")
	}
	docs, err := Decode([]byte(b.String()), "x.yaml")
	require.NoError(t, err)
	copies := docs[0].Object["copies"].([]any)
	require.Len(t, copies, 100)
	assert.Equal(t, docs[0].Object["template"], copies[99])
}

func TestDecodeDepth(t *testing.T) {
	_, err := Decode([]byte("x: "+strings.Repeat("[", MaxDepth)+strings.Repeat("]", MaxDepth)), "x.yaml")
	require.NoError(t, err, "MaxDepth levels below the root")
	_, err = Decode([]byte("x: "+strings.Repeat("[", MaxDepth+1)+strings.Repeat("]", MaxDepth+1)), "x.yaml")
	require.EqualError(t, err, "x.yaml:1: nesting deeper than 200 levels")
	_, err = Decode([]byte("x: "+strings.Repeat("[", 10_001)+strings.Repeat("]", 10_001)), "x.yaml")
	require.Error(t, err, "yaml.v3 stops at 10 000 itself")
	assert.Contains(t, err.Error(), "exceeded max depth")
}

// TestYAMLKeepsFlowNulls: yaml.v3 renders the empty null of a flow
// collection ({a}) as a quoted empty string; found by FuzzDecode.
func TestYAMLKeepsFlowNulls(t *testing.T) {
	docs, err := Decode([]byte("kind: Pod\nflow: {a, b: 1}\nlist: [x, {c}]\nblock:\n"), "x.yaml")
	require.NoError(t, err)
	out, err := docs[0].YAML()
	require.NoError(t, err)
	assert.Equal(t, "kind: Pod\nflow: {a: null, b: 1}\nlist: [x, {c: null}]\nblock:\n", string(out), "block style stays as written")
	again, err := Decode(out, "again.yaml")
	require.NoError(t, err)
	assert.Equal(t, docs[0].Object, again[0].Object)
}

func TestDecodeSizeLimit(t *testing.T) {
	big := make([]byte, MaxBytes+1)
	_, err := Decode(big, "big.yaml")
	require.EqualError(t, err, "big.yaml: input is 67108865 bytes, more than the 64 MiB limit")
	_, err = DecodeValue(big, "big.yaml")
	require.EqualError(t, err, "big.yaml: input is 67108865 bytes, more than the 64 MiB limit")
}
