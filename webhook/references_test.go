package webhook

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/corpus"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/isolation"
	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/karta"
)

// A Karta that reads its TrainJob's runtime answers InterpretComponent
// with the runtime's jobs when the handler has a resolver that holds it;
// without one, or without the runtime, the answer says which reference
// was absent in a Warning header, and succeeds on what the Karta makes
// of the absence. The same in a worker process (the cluster's Kartas run
// isolated), where the supervisor resolves.
func TestReferencesAnswerAndWarnings(t *testing.T) {
	sup, err := isolation.NewSupervisor(isolation.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sup.Close() })
	ks, err := karta.LoadFile("../examples/kartas/trainjob-runtime.yaml")
	require.NoError(t, err)
	p, err := interpreter.Compile(ks[0], interpreter.Options{})
	require.NoError(t, err)
	reg := interpreter.NewRegistry()
	reg.Put(p)
	runtime, err := corpus.LoadObjects("../examples/trainjob/refs/torchtune-llama3.2-3b.yaml")
	require.NoError(t, err)
	body := kartaReview(t, "u-comp", karmada.OpInterpretComponent, "../examples/trainjob/running.yaml", nil)

	for _, tc := range []struct {
		name       string
		resolver   interpreter.Resolver
		components []string
		warnings   []string
	}{
		{"resolved", interpreter.NewStaticResolver(runtime...), []string{"dataset-initializer", "model-initializer", "node"}, nil},
		{"no resolver", nil, nil, []string{`299 karta "karta \"trainjob-runtime\": reference \"cluster\": no resolver: absent"`}},
		{"missing", interpreter.NewStaticResolver(), nil,
			[]string{`299 karta "karta \"trainjob-runtime\": reference \"cluster\": ClusterTrainingRuntime torchtune-llama3.2-3b not found: null"`}},
	} {
		for _, isolated := range []bool{false, true} {
			kartas := Kartas{Registry: reg}
			if isolated {
				kartas.Workers = sup
			}
			t.Run(fmt.Sprintf("%s/isolated=%t", tc.name, isolated), func(t *testing.T) {
				h := New(Options{References: tc.resolver}, kartas)
				r := httptest.NewRequest(http.MethodPost, InterpretPath, bytes.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				assert.Equal(t, tc.warnings, w.Header().Values("Warning"))

				_, resp := post(t, h, body)
				require.True(t, resp.Response.Successful, "%+v", resp.Response.Status)
				var names []string
				for _, c := range resp.Response.Components {
					names = append(names, c.Name)
				}
				assert.Equal(t, tc.components, names)
			})
		}
	}
}
