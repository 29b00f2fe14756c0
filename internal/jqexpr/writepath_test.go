package jqexpr

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// WritePath drops defaults so that path() locates the field a default
// stands in for, whether or not that field is set.
func TestWritePath(t *testing.T) {
	tests := []struct {
		expr  string
		input string
		want  []any // the locations path(WritePath(expr)) yields
	}{
		{expr: ".spec.replicas // 1", input: `{"spec":{}}`, want: []any{[]any{"spec", "replicas"}}},
		{expr: ".spec.replicas // 1", input: `{"spec":{"replicas":3}}`, want: []any{[]any{"spec", "replicas"}}},
		{expr: ".spec.replicas // 1", input: `{}`, want: []any{[]any{"spec", "replicas"}}},
		{expr: ".spec.suspend // false", input: `{}`, want: []any{[]any{"spec", "suspend"}}},
		// Both sides paths: jq's own choice, the first truthy one.
		{expr: ".a // .b // 0", input: `{"b":2}`, want: []any{[]any{"b"}}},
		{expr: ".a // .b // 0", input: `{}`, want: []any{[]any{"b"}}},
		{expr: ".s[]? | .n // 1", input: `{"s":[{},{"n":2}]}`, want: []any{[]any{"s", 0, "n"}, []any{"s", 1, "n"}}},
		{expr: "(.a // 1), .b", input: `{}`, want: []any{[]any{"a"}, []any{"b"}}},
		{expr: ".a", input: `{}`, want: []any{[]any{"a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.expr+" on "+tt.input, func(t *testing.T) {
			a, errs := Check(tt.expr)
			require.Empty(t, errs)
			ok, reason := a.Assignable()
			require.True(t, ok, reason)
			before := a.Query.String()
			w := WritePath(a.Query)
			assert.Equal(t, before, a.Query.String(), "the query itself is not changed")
			code, err := gojq.Compile(&gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFunc,
				Func: &gojq.Func{Name: "path", Args: []*gojq.Query{w}}}})
			require.NoError(t, err)
			var in any
			require.NoError(t, json.Unmarshal([]byte(tt.input), &in))
			var got []any
			iter := code.Run(in)
			for {
				v, ok := iter.Next()
				if !ok {
					break
				}
				require.NotImplements(t, (*error)(nil), v)
				got = append(got, v)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestWritePathNil(t *testing.T) {
	assert.Nil(t, WritePath(nil))
}
