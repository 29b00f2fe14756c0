package isolation

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/internal/corpus"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/karta"
)

// A worker holds no resolver: the supervisor resolves the references with
// the caller's and passes the objects, so an isolated Karta answers as
// it does in process, with the runtime it references or without it.
func TestIsolatedReferences(t *testing.T) {
	ks, err := karta.LoadFile(filepath.Join("..", "examples", "kartas", "trainjob-runtime.yaml"))
	require.NoError(t, err)
	p := compile(t, ks[0], interpreter.Options{})
	ip := supervisor(t, Options{}).Program(p)
	load := func(file string) []*unstructured.Unstructured {
		objs, err := corpus.LoadObjects(filepath.Join("..", "examples", "trainjob", file))
		require.NoError(t, err)
		return objs
	}
	running := load("running.yaml")[0]
	runtime := interpreter.NewStaticResolver(load("refs/torchtune-llama3.2-3b.yaml")...)

	for _, tc := range []struct {
		name     string
		resolver interpreter.Resolver
		jobs     int
		warning  string
	}{
		{"resolved", runtime, 3, ""},
		{"no resolver", nil, 0, `karta "trainjob-runtime": reference "cluster": no resolver: absent`},
		{"missing", interpreter.NewStaticResolver(), 0, `karta "trainjob-runtime": reference "cluster": ClusterTrainingRuntime torchtune-llama3.2-3b not found: null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var inProcess, isolated []string
			ctx := bounded(t, time.Minute)
			want, err := p.GetPodSpecs(interpreter.WithResolver(ctx, tc.resolver, func(w interpreter.ReferenceWarning) { inProcess = append(inProcess, w.String()) }), running)
			require.NoError(t, err)
			got, err := ip.GetPodSpecs(interpreter.WithResolver(ctx, tc.resolver, func(w interpreter.ReferenceWarning) { isolated = append(isolated, w.String()) }), running)
			require.NoError(t, err)
			assert.Equal(t, want, got)
			assert.Len(t, got.Items, tc.jobs)
			assert.Equal(t, inProcess, isolated, "the supervisor warns as the call in process does")
			if tc.warning != "" {
				assert.Contains(t, isolated, tc.warning)
			}

			// Karmada's operations bind the references themselves: in
			// process from the caller's resolver, in the worker from what
			// the supervisor passed.
			comps, err := ip.Karmada().GetComponents(interpreter.WithResolver(ctx, tc.resolver, nil), running)
			require.NoError(t, err)
			wantComps, err := karmada.ForProgram(p).GetComponents(interpreter.WithResolver(ctx, tc.resolver, nil), running)
			require.NoError(t, err)
			assert.Equal(t, wantComps, comps)
			assert.Len(t, comps, tc.jobs)
		})
	}
}
