package jsonpatch

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	evanphx "gopkg.in/evanphx/json-patch.v4"
)

// checkPatch creates the patch from a to b, applies it to a with an
// independent RFC 6902 implementation and compares with b.
func checkPatch(t *testing.T, a, b string) []Operation {
	t.Helper()
	ops, err := Create([]byte(a), []byte(b))
	require.NoError(t, err)
	raw, err := json.Marshal(ops)
	require.NoError(t, err)
	p, err := evanphx.DecodePatch(raw)
	require.NoError(t, err, string(raw))
	got, err := p.Apply([]byte(a))
	require.NoError(t, err, string(raw))
	assert.JSONEq(t, b, string(got), "patch %s", raw)
	return ops
}

func TestCreate(t *testing.T) {
	tests := []struct {
		name, a, b, patch string
	}{
		{"equal", `{"a":1,"b":[1,{"c":null}]}`, `{"b":[1,{"c":null}],"a":1}`, `[]`},
		{"replace scalar", `{"a":1}`, `{"a":"1"}`, `[{"op":"replace","path":"/a","value":"1"}]`},
		{"number literals differ", `{"a":1}`, `{"a":1.0}`, `[{"op":"replace","path":"/a","value":1.0}]`},
		{"add and remove", `{"a":1,"b":2}`, `{"b":2,"c":{"d":[]}}`, `[{"op":"remove","path":"/a"},{"op":"add","path":"/c","value":{"d":[]}}]`},
		{"null value", `{"a":1}`, `{"a":null,"b":null}`, `[{"op":"replace","path":"/a","value":null},{"op":"add","path":"/b","value":null}]`},
		{"escaped names", `{"a/b":1,"c~d":{"e":1}}`, `{"a/b":2,"c~d":{}}`, `[{"op":"replace","path":"/a~1b","value":2},{"op":"remove","path":"/c~0d/e"}]`},
		{"array shrinks", `{"l":[1,2,3,4]}`, `{"l":[1,5]}`, `[{"op":"replace","path":"/l/1","value":5},{"op":"remove","path":"/l/3"},{"op":"remove","path":"/l/2"}]`},
		{"array grows", `{"l":[1]}`, `{"l":[1,2,{"x":1}]}`, `[{"op":"add","path":"/l/1","value":2},{"op":"add","path":"/l/2","value":{"x":1}}]`},
		{"type change", `{"a":{"b":1}}`, `{"a":[1]}`, `[{"op":"replace","path":"/a","value":[1]}]`},
		{"nested", `{"m":{"l":[{"k":"v"}]}}`, `{"m":{"l":[{"k":"w","n":true}]}}`, `[{"op":"replace","path":"/m/l/0/k","value":"w"},{"op":"add","path":"/m/l/0/n","value":true}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops := checkPatch(t, tt.a, tt.b)
			raw, err := json.Marshal(ops)
			require.NoError(t, err)
			if ops == nil {
				raw = []byte("[]")
			}
			assert.JSONEq(t, tt.patch, string(raw))
		})
	}
}

func TestCreatePatchRejectsBadJSON(t *testing.T) {
	_, err := Create([]byte(`{`), []byte(`{}`))
	assert.ErrorContains(t, err, "original document")
	_, err = Create([]byte(`{}`), []byte(`{"a":`))
	assert.ErrorContains(t, err, "result document")
}

// Random pairs of related documents: the patch always turns one into the
// other.
func TestCreatePatchRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		a := randomObject(r, 3)
		b, ok := mutate(r, a, 3).(map[string]any)
		if !ok { // the root stays an object, as Kubernetes objects are
			b = randomObject(r, 3)
		}
		ja, err := json.Marshal(a)
		require.NoError(t, err)
		jb, err := json.Marshal(b)
		require.NoError(t, err)
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkPatch(t, string(ja), string(jb)) })
	}
}

var randomKeys = []string{"a", "b", "c/d", "e~f", ""}

func randomValue(r *rand.Rand, depth int) any {
	n := 6
	if depth <= 0 {
		n = 4
	}
	switch r.IntN(n) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return r.IntN(5)
	case 3:
		return randomKeys[r.IntN(len(randomKeys))]
	case 4:
		return randomObject(r, depth-1)
	default:
		l := make([]any, r.IntN(4))
		for i := range l {
			l[i] = randomValue(r, depth-1)
		}
		return l
	}
}

func randomObject(r *rand.Rand, depth int) map[string]any {
	m := map[string]any{}
	for range r.IntN(4) {
		m[randomKeys[r.IntN(len(randomKeys))]] = randomValue(r, depth)
	}
	return m
}

// mutate returns a copy of v with random changes.
func mutate(r *rand.Rand, v any, depth int) any {
	if r.IntN(6) == 0 {
		return randomValue(r, depth)
	}
	switch x := v.(type) {
	case map[string]any:
		m := map[string]any{}
		for k, e := range x {
			switch r.IntN(4) {
			case 0: // dropped
			case 1:
				m[k] = mutate(r, e, depth-1)
			default:
				m[k] = e
			}
		}
		if r.IntN(3) == 0 {
			m[randomKeys[r.IntN(len(randomKeys))]] = randomValue(r, depth-1)
		}
		return m
	case []any:
		var l []any
		for _, e := range x {
			if r.IntN(4) != 0 {
				l = append(l, mutate(r, e, depth-1))
			}
		}
		for range r.IntN(3) {
			l = append(l, randomValue(r, depth-1))
		}
		if l == nil {
			l = []any{}
		}
		return l
	}
	return v
}
