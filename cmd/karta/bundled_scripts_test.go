package main

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/karmada"
)

// The bundled scripts (scripts/karmada, scripts/argocd) are what make
// generate writes from the built-ins today: a change to a built-in, its
// examples or the exports fails this test until they are regenerated.
func TestBundledScriptsAreFresh(t *testing.T) {
	reg, err := builtinRegistry()
	require.NoError(t, err)
	progs := reg.List()
	sort.Slice(progs, func(i, j int) bool { return progs[i].Name() < progs[j].Name() })

	want := map[string][]byte{}
	seen := map[string]bool{}
	for _, p := range progs {
		data, err := karmada.Export(p)
		if err == nil {
			want["karmada/"+p.Name()+".yaml"] = data
		}
		gk := p.GVK().GroupKind().String()
		if seen[gk] {
			continue // written by the first Karta of the kind, as karta argo export does
		}
		seen[gk] = true
		files, _, err := argoFolder(context.Background(), p, filepath.Join("../../examples", p.Name()))
		require.NoError(t, err, p.Name())
		for name, data := range files {
			want["argocd/"+name] = data
		}
	}

	got := map[string][]byte{}
	for _, sub := range []string{"karmada", "argocd"} {
		root := filepath.Join("../../scripts", sub)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel("../../scripts", p)
			if err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			got[filepath.ToSlash(rel)] = data
			return err
		})
		require.NoError(t, err, "run make generate")
	}
	names := func(m map[string][]byte) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	require.Equal(t, names(want), names(got), "scripts/ holds other files than make generate writes: run make generate")
	for name, data := range want {
		assert.Equal(t, string(data), string(got[name]), "%s is stale: run make generate", name)
	}
	assert.Contains(t, got, "argocd/jobset.x-k8s.io/JobSet/health.lua")
}
