package karmada

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decodeStatusJSON decodes what it handles as json.Unmarshal does, and
// declines the rest, for which json.Unmarshal then gives the value or the
// error.
func TestDecodeStatusJSONIsJSONUnmarshal(t *testing.T) {
	for _, c := range []struct {
		text    string
		handled bool
	}{
		{`{"replicas":3,"readyReplicas":2,"conditions":[{"type":"Ready","status":"True"}]}`, true},
		{` { "a" : [ 1 , -0.5 , 2e3 , 1E-2 , 0 , -0 , true , false , null ] , "b" : { } , "c" : [ ] } `, true},
		{`{"a":1,"a":2}`, true},
		{`{"name":"caf\u00e9"}`, false},
		{`{"name":"café ✓"}`, true},
		{`{"name":"tab\there"}`, false},
		{"{\"name\":\"\xff\"}", false},
		{"{\"name\":\"a\tb\"}", false},
		{`"just a string"`, true},
		{`12345678901234567890`, true},
		{`1e400`, false},
		{`01`, false},
		{`1.`, false},
		{`.5`, false},
		{`-`, false},
		{`1e`, false},
		{`+1`, false},
		{`{"a":1,}`, false},
		{`[1,]`, false},
		{`{"a" 1}`, false},
		{`{a:1}`, false},
		{`[1] x`, false},
		{`tru`, false},
		{`nul`, false},
		{``, false},
		{`{"a":[{"b":{"c":[null]}}]}`, true},
	} {
		t.Run(c.text, func(t *testing.T) {
			got, ok := decodeStatusJSON([]byte(c.text))
			assert.Equal(t, c.handled, ok)
			var want any
			err := json.Unmarshal([]byte(c.text), &want)
			if ok {
				require.NoError(t, err)
				assert.Equal(t, want, got)
			}
		})
	}
	deep := ""
	for range statusJSONDepth + 2 {
		deep = "[" + deep + "]"
	}
	_, ok := decodeStatusJSON([]byte(deep))
	assert.False(t, ok, "too deep: encoding/json decides")
}

// Whatever the text, a decoded value is json.Unmarshal's.
func FuzzDecodeStatusJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,"x",true,null,{}]}`, `[]`, `-0.0e+1`, `{"a":"\u00e9"}`, `"é"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := decodeStatusJSON(data)
		if !ok {
			return
		}
		var want any
		require.NoError(t, json.Unmarshal(data, &want), "%q", data)
		assert.Equal(t, want, got, "%q", data)
	})
}
