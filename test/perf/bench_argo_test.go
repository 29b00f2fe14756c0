package perf

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/argo"
	"github.com/kartalua/karta/internal/corpus"
)

// argoBench is the Argo corpus with karta's runner (package argo, each
// script compiled once) and baseline (e), ArgoVM, over all of it. Only the
// cases karta runs without error are timed, and each of them gives equal
// results on both.
type argoBench struct {
	cases   []*corpus.ArgoCase
	scripts map[string]*argo.Script // by Name of the case's script
	vm      *ArgoVM
	// failing are the cases left out: the action tests that expect an
	// error (both fail; nothing to compare).
	failing []*corpus.ArgoCase
}

var (
	argoOnce sync.Once
	argoErr  error
	argoData *argoBench
)

func loadArgoBench(tb testing.TB) *argoBench {
	tb.Helper()
	argoOnce.Do(func() { argoData, argoErr = buildArgoBench() })
	if argoErr != nil {
		tb.Fatal(argoErr)
	}
	return argoData
}

func scriptKey(c *corpus.ArgoCase) string { return c.Dir + "\x00" + c.Script }

func buildArgoBench() (*argoBench, error) {
	all, err := corpus.LoadArgoCorpus(corpus.DefaultArgoCorpusDirs...)
	if err != nil {
		return nil, err
	}
	ab := &argoBench{scripts: map[string]*argo.Script{}, vm: NewArgoVM()}
	ctx := context.Background()
	for _, c := range all {
		if _, ok := ab.scripts[scriptKey(c)]; !ok {
			s, err := argo.Compile(c.Script, c.Source)
			if err != nil {
				return nil, err
			}
			ab.scripts[scriptKey(c)] = s
		}
		if _, err := ab.karta(ctx, c); err != nil {
			if c.WantError == "" {
				return nil, fmt.Errorf("%s: karta: %w", c.Name(), err)
			}
			if _, vmErr := ab.argocd(c); vmErr == nil {
				return nil, fmt.Errorf("%s: karta fails (%v), baseline (e) does not", c.Name(), err)
			}
			ab.failing = append(ab.failing, c)
			continue
		}
		if err := ab.agree(ctx, c); err != nil {
			return nil, err
		}
		ab.cases = append(ab.cases, c)
	}
	return ab, nil
}

// karta runs a case on karta's runner; the result is what the operation
// returns (the resources, for an action).
func (ab *argoBench) karta(ctx context.Context, c *corpus.ArgoCase) (any, error) {
	s := ab.scripts[scriptKey(c)]
	switch c.Op {
	case corpus.ArgoHealth:
		return s.Run(ctx, c.Object.Object)
	case corpus.ArgoDiscovery:
		return s.Discover(ctx, c.Object.Object)
	}
	res, err := s.RunAction(ctx, c.Object.Object, c.Params)
	if err != nil {
		return nil, err
	}
	return res.Resources, nil
}

// argocd runs a case on baseline (e).
func (ab *argoBench) argocd(c *corpus.ArgoCase) (any, error) {
	switch c.Op {
	case corpus.ArgoHealth:
		return ab.vm.Health(c.Object, c.Source)
	case corpus.ArgoDiscovery:
		return ab.vm.Discover(c.Object, c.Source)
	}
	return ab.vm.Action(c.Object, c.Source, c.Params)
}

// agree runs a case on both and compares the results (discovered actions
// by name: Argo CD lists them in map order). Actions that write the time
// (os.time, os.date) differ across a second boundary, so a pair that
// differs runs again: three differences in a row differ.
func (ab *argoBench) agree(ctx context.Context, c *corpus.ArgoCase) error {
	var w, g string
	for range 3 {
		want, err := ab.karta(ctx, c)
		if err != nil {
			return fmt.Errorf("%s: karta: %w", c.Name(), err)
		}
		got, err := ab.argocd(c)
		if err != nil {
			return fmt.Errorf("%s: baseline (e): %w", c.Name(), err)
		}
		if w, err = canonicalJSON(byName(want)); err != nil {
			return err
		}
		if g, err = canonicalJSON(byName(got)); err != nil {
			return err
		}
		if w == g {
			return nil
		}
	}
	return fmt.Errorf("%s: baseline (e) differs from karta\nkarta:    %s\nbaseline: %s", c.Name(), w, g)
}

// byName sorts a copy of discovered actions by name; other results are
// returned as they are.
func byName(v any) any {
	actions, ok := v.([]argo.Action)
	if !ok {
		return v
	}
	out := slices.Clone(actions)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func TestArgoVMAgreesWithKarta(t *testing.T) {
	ab := loadArgoBench(t)
	ops := map[corpus.ArgoOp]int{}
	scripts := map[corpus.ArgoOp]map[string]bool{}
	for _, c := range ab.cases {
		ops[c.Op]++
		if scripts[c.Op] == nil {
			scripts[c.Op] = map[string]bool{}
		}
		scripts[c.Op][scriptKey(c)] = true
	}
	t.Logf("%d cases agree (%v); %d expect an error and fail on both", len(ab.cases), ops, len(ab.failing))
	for _, op := range corpus.ArgoOps {
		assert.GreaterOrEqual(t, ops[op], 10, "the corpus has %s cases", op)
		assert.GreaterOrEqual(t, len(scripts[op]), 5, "the corpus has %s scripts", op)
	}
	for _, c := range ab.failing {
		assert.Equal(t, corpus.ArgoAction, c.Op, c.Name())
	}
}

// TestArgoCorpusPicksArgoScripts checks the corpus against the expected
// verdicts of its health tests: the script LoadArgoCorpus picks for each
// input is the one Argo CD's lookup picks, or a verdict would differ.
func TestArgoCorpusPicksArgoScripts(t *testing.T) {
	ab := loadArgoBench(t)
	ctx := context.Background()
	type expected struct {
		Tests []struct {
			InputPath    string      `json:"inputPath"`
			HealthStatus argo.Health `json:"healthStatus"`
		} `json:"tests"`
	}
	want := map[string]argo.Health{}
	for _, dir := range corpus.DefaultArgoCorpusDirs {
		require.NoError(t, walkFiles(dir, "health_test.yaml", func(rel string, data []byte) {
			var tf expected
			require.NoError(t, yaml.Unmarshal(data, &tf), rel)
			for _, tc := range tf.Tests {
				want[dir+"\x00"+cleanJoin(rel, tc.InputPath)] = tc.HealthStatus
			}
		}))
	}
	n := 0
	for _, c := range ab.cases {
		if c.Op != corpus.ArgoHealth {
			continue
		}
		w, ok := want[c.Dir+"\x00"+c.Input]
		require.True(t, ok, c.Name())
		got, err := ab.karta(ctx, c)
		require.NoError(t, err, c.Name())
		assert.Equal(t, w, got, c.Name())
		n++
	}
	assert.Equal(t, len(want), n, "every health test is a case")
	wildcard := false
	for _, c := range ab.cases {
		wildcard = wildcard || strings.HasPrefix(c.Script, "_/")
	}
	assert.True(t, wildcard, "a wildcard folder's script is in the corpus")
}

// BenchmarkArgo runs each operation over every case of the Argo corpus
// that has one: an iteration runs them all, and the "cases" metric lets
// benchreport turn ns/op into the mean per case. karta is package argo's
// runner; argocd is baseline (e), ArgoVM.
func BenchmarkArgo(b *testing.B) {
	ab := loadArgoBench(b)
	ctx := context.Background()
	for _, op := range corpus.ArgoOps {
		var cases []*corpus.ArgoCase
		for _, c := range ab.cases {
			if c.Op == op {
				cases = append(cases, c)
			}
		}
		for _, impl := range []struct {
			name string
			run  func(c *corpus.ArgoCase) (any, error)
		}{
			{"karta", func(c *corpus.ArgoCase) (any, error) { return ab.karta(ctx, c) }},
			{"argocd", ab.argocd},
		} {
			b.Run(string(op)+"/argo-corpus/"+impl.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					for _, c := range cases {
						if _, err := impl.run(c); err != nil {
							b.Fatal(c.Name(), err)
						}
					}
				}
				b.ReportMetric(float64(len(cases)), "cases")
			})
		}
	}
}

// BenchmarkArgoCases measures the speedup over baseline (e) of every case
// on its own, as BenchmarkKarmadaCases does for the Karmada corpus: the
// smallest, 10th percentile and median ratio over the cases, the five
// smallest logged. Run it once (-benchtime 1x).
func BenchmarkArgoCases(b *testing.B) {
	ab := loadArgoBench(b)
	ctx := context.Background()
	const rounds = 5
	type caseRatio struct {
		name  string
		ratio float64
	}
	var ratios []caseRatio
	for i := 0; i < b.N; i++ {
		ratios = ratios[:0]
		for _, c := range ab.cases {
			kartaCall := func() {
				if _, err := ab.karta(ctx, c); err != nil {
					b.Fatal(c.Name(), err)
				}
			}
			vmCall := func() {
				if _, err := ab.argocd(c); err != nil {
					b.Fatal(c.Name(), err)
				}
			}
			kn, vn := batch(kartaCall), batch(vmCall)
			var rs []float64
			for range rounds {
				k := timePer(kartaCall, kn)
				v := timePer(vmCall, vn)
				rs = append(rs, float64(v)/float64(k))
			}
			sort.Float64s(rs)
			ratios = append(ratios, caseRatio{c.Name() + " (" + string(c.Op) + ")", rs[rounds/2]})
		}
	}
	sort.Slice(ratios, func(i, j int) bool { return ratios[i].ratio < ratios[j].ratio })
	for _, r := range ratios[:min(5, len(ratios))] {
		b.Logf("%.1fx %s", r.ratio, r.name)
	}
	b.ReportMetric(float64(len(ratios)), "cases")
	b.ReportMetric(ratios[0].ratio, "min-ratio")
	b.ReportMetric(ratios[len(ratios)/10].ratio, "p10-ratio")
	b.ReportMetric(ratios[len(ratios)/2].ratio, "median-ratio")
}

// walkFiles calls fn with the path (relative to dir, slashes) and content
// of every file named name under dir.
func walkFiles(dir, name string, fn func(rel string, data []byte)) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != name {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		fn(filepath.ToSlash(rel), data)
		return nil
	})
}

// cleanJoin is inputPath relative to the folder of the test file rel.
func cleanJoin(rel, inputPath string) string { return path.Join(path.Dir(rel), inputPath) }
