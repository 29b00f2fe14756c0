package interpreter

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/karta"
)

func ptr[T any](v T) *T { return &v }

func TestScaleValue(t *testing.T) {
	cases := []struct {
		in      any
		want    *int64
		wantErr string
	}{
		{nil, nil, ""},
		{float64(3), ptr[int64](3), ""},
		{int64(0), ptr[int64](0), ""},
		{int(7), ptr[int64](7), ""},
		{json.Number("12"), ptr[int64](12), ""},
		{"2", ptr[int64](2), ""}, // Knative's min-scale annotation
		{"+5", ptr[int64](5), ""},
		{float64(2147483647), ptr[int64](2147483647), ""},
		{2.5, nil, "2.5 is not an integer"},
		{"2x", nil, `string "2x" is not a decimal integer`},
		{"", nil, `string "" is not a decimal integer`},
		{" 2", nil, `string " 2" is not a decimal integer`},
		{"0x10", nil, `string "0x10" is not a decimal integer`},
		{true, nil, "boolean true is not a number"},
		{map[string]any{}, nil, "an object is not a number"},
		{[]any{}, nil, "an array is not a number"},
		{float64(-1), nil, "-1 is out of range 0…2147483647"},
		{"-1", nil, "-1 is out of range 0…2147483647"},
		{float64(2147483648), nil, "2.147483648e+09 is out of range 0…2147483647"},
		{"99999999999999999999", nil, `string "99999999999999999999" is not a decimal integer`},
	}
	for _, tc := range cases {
		got, err := scaleValue(tc.in)
		if tc.wantErr != "" {
			assert.EqualError(t, err, tc.wantErr, "%#v", tc.in)
			continue
		}
		require.NoError(t, err, "%#v", tc.in)
		assert.Equal(t, tc.want, got, "%#v", tc.in)
	}
}

func TestInstanceIDs(t *testing.T) {
	ids, err := instanceIDs("worker", []any{"a", float64(3), int64(4), 1e21, json.Number("5")})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "3", "4", "1e+21", "5"}, ids)

	for _, tc := range []struct {
		in   []any
		want string
	}{
		{[]any{nil}, `component "worker": instanceIdPath output 1: an instance id must be a string or a number, got null`},
		{[]any{"a", ""}, `component "worker": instanceIdPath output 2: an instance id may not be empty`},
		{[]any{true}, `component "worker": instanceIdPath output 1: an instance id must be a string or a number, got boolean true`},
		{[]any{[]any{}}, `component "worker": instanceIdPath output 1: an instance id must be a string or a number, got an array`},
		{[]any{map[string]any{}}, `component "worker": instanceIdPath output 1: an instance id must be a string or a number, got an object`},
		{[]any{"a", "b", "a", float64(1), "1"}, `component "worker": instanceIdPath yields duplicate id(s) [a 1]`},
	} {
		_, err := instanceIDs("worker", tc.in)
		assert.EqualError(t, err, tc.want)
	}
}

func TestZipError(t *testing.T) {
	assert.EqualError(t, zipError("worker", "podTemplateSpecPath", 1, []string{"a", "b"}),
		`component "worker": podTemplateSpecPath yields 1 value(s) for 2 id(s) [a b]`)
}

func TestConditions(t *testing.T) {
	def := &karta.ConditionsDefinition{Path: ".status.conditions", TypeFieldName: "type", StatusFieldName: "status",
		MessageFieldName: "message", ReasonFieldName: ""}
	outputs := []any{
		nil,
		[]any{
			map[string]any{"type": "Created", "status": "True", "reason": "JobCreated", "message": "created"},
			map[string]any{"status": "True"},              // no type: skipped
			map[string]any{"type": "", "status": "True"},  // empty type: skipped
			map[string]any{"type": 3.0, "status": "True"}, // non-string type: skipped
			map[string]any{"type": "Running", "status": "False"},
		},
		[]any{map[string]any{"type": "Running", "status": "True", "message": nil}},
	}
	got, err := conditions(def, outputs)
	require.NoError(t, err)
	assert.Equal(t, []Condition{
		{Type: "Created", Status: ptr("True"), Message: ptr("created")}, // reason disabled by ""
		{Type: "Running", Status: ptr("False")},
		{Type: "Running", Status: ptr("True")},
	}, got)

	last := lastOfType(got)
	assert.True(t, conditionMatches(last, karta.ConditionMatcher{Type: "Running", Status: "True"}), "the last Running wins")
	assert.False(t, conditionMatches(last, karta.ConditionMatcher{Type: "Running", Status: "False"}))
	assert.True(t, conditionMatches(last, karta.ConditionMatcher{Type: "Created"}))
	assert.False(t, conditionMatches(last, karta.ConditionMatcher{Type: "Created", Reason: "JobCreated"}), "a disabled reason is null")
	assert.False(t, conditionMatches(last, karta.ConditionMatcher{Type: "Failed"}))

	def.ReasonFieldName = "reason"
	got, err = conditions(def, outputs)
	require.NoError(t, err)
	assert.True(t, conditionMatches(lastOfType(got), karta.ConditionMatcher{Type: "Created", Status: "True", Reason: "JobCreated"}))

	for _, tc := range []struct {
		in   []any
		want string
	}{
		{[]any{"x"}, `conditionsDefinition.path output 1 must be an array of objects or null, got string "x"`},
		{[]any{[]any{"x"}}, `conditionsDefinition.path output 1: entry 0 must be an object, got string "x"`},
		{[]any{[]any{map[string]any{"type": "A", "status": true}}}, `condition "A": field "status" must be a string or null, got boolean true`},
	} {
		_, err := conditions(def, tc.in)
		assert.EqualError(t, err, tc.want)
	}

	// {} is no conditions, as on every Lua path, where it is the empty
	// table; a non-empty object is still an error there and here.
	got, err = conditions(def, []any{map[string]any{}, nil})
	require.NoError(t, err)
	assert.Empty(t, got)
}
