package argo_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/argo"
	"github.com/kartalua/karta/internal/corpus"
	"github.com/kartalua/karta/luaapi"
)

// TestLazyAgreesWithEagerOnArgoCorpus runs every case of the Argo corpus
// (the customizations `karta argo test` is tested on and the bundled
// exports of the built-ins: every health, discovery and action test) with
// the object as lazy tables and converted eagerly, as Argo CD converts it:
// the results, and the errors of the cases that fail, are equal.
func TestLazyAgreesWithEagerOnArgoCorpus(t *testing.T) {
	cases, err := corpus.LoadArgoCorpus(
		filepath.Join("..", "cmd", "karta", "testdata", "argo", "customizations"),
		filepath.Join("..", "scripts", "argocd"),
	)
	require.NoError(t, err)
	require.Greater(t, len(cases), 100)
	type pair struct{ lazy, eager *argo.Script }
	scripts := map[string]pair{}
	ctx := context.Background()
	run := func(s *argo.Script, c *corpus.ArgoCase) (any, string) {
		var v any
		var err error
		switch c.Op {
		case corpus.ArgoHealth:
			v, err = s.Run(ctx, c.Object.Object)
		case corpus.ArgoDiscovery:
			v, err = s.Discover(ctx, c.Object.Object)
		default:
			v, err = s.RunAction(ctx, c.Object.DeepCopy().Object, c.Params)
		}
		if err != nil {
			return nil, err.Error()
		}
		return v, ""
	}
	ops := map[corpus.ArgoOp]int{}
	for _, c := range cases {
		key := c.Dir + "\x00" + c.Script
		p, ok := scripts[key]
		if !ok {
			lazy, err := argo.Compile(c.Script, c.Source)
			require.NoError(t, err, c.Name())
			eager, err := argo.CompileEager(c.Script, c.Source, luaapi.Limits{})
			require.NoError(t, err, c.Name())
			p = pair{lazy, eager}
			scripts[key] = p
		}
		// Actions that write the time (os.date) differ across a second
		// boundary: a pair that differs runs again.
		var lv, ev any
		var le, ee string
		for range 3 {
			lv, le = run(p.lazy, c)
			ev, ee = run(p.eager, c)
			if le == ee && reflect.DeepEqual(lv, ev) {
				break
			}
		}
		assert.Equal(t, ee, le, c.Name())
		assert.Equal(t, ev, lv, c.Name())
		ops[c.Op]++
	}
	t.Logf("%d cases: %v", len(cases), ops)
}
