package webhook

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/heapwatch"
	"github.com/kartalua/karta/karmada"
)

// Request bodies whose decoding grows faster than their bytes are refused
// before any decoder runs, and an object with a duplicate key is refused
// as the command line refuses it in a file (issue 28).
func TestHostileBodies(t *testing.T) {
	h := newHandler(t, Options{})
	empties := `{"apiVersion":"test.karta.io/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"x":[` +
		strings.Repeat("{},", 3_000_000) + `{}]}}`
	dup := `{"apiVersion":"test.karta.io/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"replicas":1,"replicas":100}}`
	for _, tc := range []struct {
		name, object string
		code         int32
		msg          string
	}{
		{"9 MB of empty objects", empties, 400, "more than the limit"},
		{"a duplicate key", dup, 400, `duplicate field "spec.replicas"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := review("u1", karmada.OpInterpretHealth, widgetKind, map[string]any{"object": json.RawMessage(tc.object)})
			var code int
			var out *ResourceInterpreterContext
			cost := heapwatch.Measure(func() { code, out = post(t, h, body) })
			assert.Equal(t, http.StatusOK, code)
			require.NotNil(t, out.Response.Status)
			assert.False(t, out.Response.Successful)
			assert.Equal(t, tc.code, out.Response.Status.Code)
			assert.Contains(t, out.Response.Status.Message, tc.msg)
			assert.Less(t, cost.Growth, uint64(256<<20), "heap growth")
			heapwatch.AssertPrompt(t, cost, 2500*time.Millisecond)
		})
	}
}
