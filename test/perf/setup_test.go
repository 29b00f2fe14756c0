package perf

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/internal/conformance"
	"github.com/kartalua/karta/internal/corpus"
	"github.com/kartalua/karta/internal/replacedoverrides"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karmada"
)

// examplesDir holds examples/NAME/{running,pods,revisions}.yaml.
var examplesDir = filepath.Join("..", "..", "examples")

// baselineKinds are the built-ins baselines (a) and (b) implement.
var baselineKinds = []string{"pytorchjob", "jobset", "leaderworkerset"}

// benchWorkload is a workload ready to benchmark: its compiled Program,
// the pod PlacePod places and, for the baseline kinds, the baselines.
type benchWorkload struct {
	*corpus.Workload
	prog *interpreter.Program
	pod  *unstructured.Unstructured
	gojq *GojqKarta
	hand *HandGo
	gang *GangGo
	// replaced is the built-in as it was before its views replaced its
	// bundled override (internal/replacedoverrides); nil for the others.
	replaced *interpreter.Program
}

var (
	setupOnce sync.Once
	setupErr  error
	workloads []*benchWorkload
)

// loadBench compiles every built-in once per test binary.
func loadBench(tb testing.TB) []*benchWorkload {
	tb.Helper()
	setupOnce.Do(func() { workloads, setupErr = buildBench() })
	if setupErr != nil {
		tb.Fatal(setupErr)
	}
	return workloads
}

func buildBench() ([]*benchWorkload, error) {
	ws, err := corpus.LoadWorkloads(examplesDir)
	if err != nil {
		return nil, err
	}
	var out []*benchWorkload
	for _, w := range ws {
		bw := &benchWorkload{Workload: w}
		if bw.prog, err = w.Program(); err != nil {
			return nil, err
		}
		// The pod PlacePod benchmarks: the first one the Karta places.
		for _, pod := range w.Pods {
			if _, err := bw.prog.PlacePod(context.Background(), w.Running, pod); err == nil {
				bw.pod = pod
				break
			}
		}
		if bw.replaced, _, err = replacedoverrides.Compile(w.Name, w.Builtin.Karta, interpreter.Options{}); err != nil {
			return nil, err
		}
		for _, k := range baselineKinds {
			if k != w.Name {
				continue
			}
			if bw.gojq, err = NewGojqKarta(w.Builtin.Karta); err != nil {
				return nil, err
			}
			if bw.hand, err = NewHandGo(w.Name); err != nil {
				return nil, err
			}
			if bw.gang, err = NewGangGo(w.Name); err != nil {
				return nil, err
			}
		}
		out = append(out, bw)
	}
	return out, nil
}

func workload(tb testing.TB, name string) *benchWorkload {
	tb.Helper()
	for _, w := range loadBench(tb) {
		if w.Name == name {
			return w
		}
	}
	tb.Fatalf("no workload %q", name)
	return nil
}

// canonical is v's JSON with numbers as JSON has them, so that results
// holding the object's int64 and a JSON round trip's float64 compare.
func canonical(tb testing.TB, v any) string {
	tb.Helper()
	s, err := canonicalJSON(v)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func canonicalJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		return "", err
	}
	b, err = json.Marshal(x)
	return string(b), err
}

// sameResult fails tb unless both calls succeeded with equal results.
func sameResult(tb testing.TB, what string, want any, wantErr error, got any, gotErr error) {
	tb.Helper()
	if wantErr != nil || gotErr != nil {
		tb.Fatalf("%s: karta: %v; baseline: %v", what, wantErr, gotErr)
	}
	if w, g := canonical(tb, want), canonical(tb, got); w != g {
		tb.Fatalf("%s: the baseline's result differs from karta's\nkarta:    %s\nbaseline: %s", what, w, g)
	}
}

// corpus is Karmada's corpus with karta's interpreter and baseline (c)
// over all of it; each case runs on both once, and only cases that
// succeed with equal results are kept.
type corpusBench struct {
	cases []*corpus.CorpusCase
	karta *karmada.Interpreter
	vm    *KarmadaVM
	// cached is baseline (d), Karmada's method with its proposed cache of
	// compiled scripts.
	cached *KarmadaVM
	// skipped counts the cases left out, with why.
	skipped map[string]int
}

var (
	corpusOnce sync.Once
	corpusErr  error
	corpusData *corpusBench
)

// agree runs a case on karta and on baselines (c) and (d) and compares
// the results.
// Some scripts write the current time (os.time) into their result, so a
// pair that straddles a second is run again: results that differ three
// times in a row differ.
func (cb *corpusBench) agree(ctx context.Context, cc *corpus.CorpusCase) error {
	if err := cb.agreeWith(ctx, cc, "(c)", cb.vm); err != nil {
		return err
	}
	return cb.agreeWith(ctx, cc, "(d)", cb.cached)
}

func (cb *corpusBench) agreeWith(ctx context.Context, cc *corpus.CorpusCase, name string, vm *KarmadaVM) error {
	var w, g string
	for range 3 {
		want, err := cb.karta.RunOperation(ctx, cc.Op, cc.Case)
		if err != nil {
			return fmt.Errorf("%s: karta: %w", cc.Name(), err)
		}
		got, err := vm.Run(ctx, cc.Op, cc.Case)
		if err != nil {
			return fmt.Errorf("%s: baseline %s: %w", cc.Name(), name, err)
		}
		if w, err = canonicalJSON(want); err != nil {
			return err
		}
		if g, err = canonicalJSON(got); err != nil {
			return err
		}
		if w == g {
			return nil
		}
	}
	return fmt.Errorf("%s: baseline %s differs from karta\nkarta:    %s\nbaseline: %s", cc.Name(), name, w, g)
}

// loadCorpusBench skips tb when the corpus is absent (fails it under CI:
// conformance.Require).
func loadCorpusBench(tb testing.TB) *corpusBench {
	tb.Helper()
	dir := conformance.Require(tb)
	corpusOnce.Do(func() { corpusData, corpusErr = buildCorpusBench(dir) })
	if corpusErr != nil {
		tb.Fatal(corpusErr)
	}
	return corpusData
}

func buildCorpusBench(dir string) (*corpusBench, error) {
	c, err := corpus.LoadCorpus(dir)
	if err != nil {
		return nil, err
	}
	in, err := karmada.NewInterpreter(c.Customizations, karmada.Options{})
	if err != nil {
		return nil, err
	}
	cb := &corpusBench{karta: in, vm: NewKarmadaVM(c.Customizations), cached: NewKarmadaCachedVM(c.Customizations), skipped: map[string]int{}}
	ctx := context.Background()
	for _, cc := range c.Cases {
		if _, err := in.RunOperation(ctx, cc.Op, cc.Case); err != nil {
			// Cases that expect an error, or an operation the kind does
			// not script, have no result to time.
			cb.skipped["karta fails: "+err.Error()]++
			continue
		}
		if err := cb.agree(ctx, cc); err != nil {
			return nil, err
		}
		cb.cases = append(cb.cases, cc)
	}
	return cb, nil
}
