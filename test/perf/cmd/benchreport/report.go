package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// A benchmark line of `go test -bench` output:
//
//	BenchmarkHooks/InterpretStatus/pytorchjob/karta-2  403140  2915 ns/op  416 B/op  15 allocs/op
//
// The -N suffix is GOMAXPROCS, absent when it is 1; then come the
// iterations and value-unit pairs (custom metrics included).
var procsSuffix = regexp.MustCompile(`^(.*)-(\d+)$`)

// key identifies a benchmark: its name without "Benchmark" and the procs
// suffix, and GOMAXPROCS.
type key struct {
	name  string
	procs int
}

// results holds every sample of every benchmark, in first-seen order.
type results struct {
	order   []key
	samples map[key][]map[string]float64
}

// parse reads benchmark lines; other lines are ignored.
func parse(r io.Reader) (*results, error) {
	res := &results{samples: map[key][]map[string]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1024*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		if _, err := strconv.ParseInt(fields[1], 10, 64); err != nil {
			continue // a benchmark's log output, not a result
		}
		k := key{name: strings.TrimPrefix(fields[0], "Benchmark"), procs: 1}
		if m := procsSuffix.FindStringSubmatch(k.name); m != nil {
			k.name = m[1]
			k.procs, _ = strconv.Atoi(m[2])
		}
		metrics := map[string]float64{}
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: bad value %q", fields[0], fields[i])
			}
			metrics[fields[i+1]] = v
		}
		if _, seen := res.samples[k]; !seen {
			res.order = append(res.order, k)
		}
		res.samples[k] = append(res.samples[k], metrics)
	}
	return res, sc.Err()
}

// median is the median of a benchmark's unit over its samples (the mean of
// the middle two for an even count); ok is false when no sample has it.
func (r *results) median(k key, unit string) (float64, bool) {
	var xs []float64
	for _, s := range r.samples[k] {
		if v, ok := s[unit]; ok {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return 0, false
	}
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2], true
	}
	return (xs[n/2-1] + xs[n/2]) / 2, true
}

// find returns the key of name at the given procs, or at the only procs
// it ran with when procs is 0.
func (r *results) find(name string, procs int) (key, bool) {
	var found []key
	for _, k := range r.order {
		if k.name == name && (procs == 0 || k.procs == procs) {
			found = append(found, k)
		}
	}
	if len(found) == 0 {
		return key{}, false
	}
	// Several: the highest GOMAXPROCS, the default of a plain run.
	sort.Slice(found, func(i, j int) bool { return found[i].procs > found[j].procs })
	return found[0], true
}

// row is one BENCH line: karta's medians and the baselines' ratios
// (baseline ns/op ÷ karta ns/op: how many times faster karta is; NaN when
// the baseline does not apply).
type row struct {
	name                   string
	ns, allocs             float64
	gojq, goRatio, karmada float64
	// override is a Hooks row's ratio against the bundled override its
	// view replaced (issue 29), NaN for the others.
	override float64
	// karmadaCached is a Karmada corpus row's ratio against baseline (d).
	karmadaCached float64
	argocd        float64
	// eager is a Registry row's ratio against the eager registry.
	eager float64
	// corpus is set for a row of the Karmada or the Argo corpus, whose
	// figures are per case; corpusBaseline names its baseline (karmada,
	// argocd).
	corpus         bool
	corpusBaseline string
}

func (r row) String() string {
	s := fmt.Sprintf("BENCH %s ns/op=%s allocs/op=%s vs-gojq=%s vs-go=%s", r.name, num(r.ns), num(r.allocs), ratio(r.gojq), ratio(r.goRatio))
	if !math.IsNaN(r.override) {
		s += " vs-override=" + ratio(r.override)
	}
	switch r.corpusBaseline {
	case "karmada":
		s += " vs-karmada=" + ratio(r.karmada)
		if !math.IsNaN(r.karmadaCached) {
			s += " vs-karmada-cached=" + ratio(r.karmadaCached)
		}
	case "argocd":
		s += " vs-argocd=" + ratio(r.argocd)
	case "eager":
		s += " vs-eager=" + ratio(r.eager)
	}
	return s
}

func num(v float64) string {
	if v >= 100 || v == math.Trunc(v) {
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// ratio prints a ratio with two decimals below 10, so that a figure next
// to a threshold (1.7x) shows on which side it is.
func ratio(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 0, 64) + "x"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "x"
}

// rows builds the BENCH lines: first Hooks/<hook>/<workload>/karta against
// .../gojq and .../go, then Karmada/<op>/karmada-corpus/karta against
// .../karmada and Argo/<op>/argo-corpus/karta against .../argocd, per case
// (the "cases" metric divides), then Compile/<name> alone, then
// Registry/<what>/karta against .../eager and Registry/compile-all alone;
// each group in the order its benchmarks ran.
func (r *results) rows() []row {
	var out []row
	for _, group := range []string{"Hooks", "Karmada", "Argo", "Compile", "Registry"} {
		for _, k := range r.order {
			parts := strings.Split(k.name, "/")
			if parts[0] != group {
				continue
			}
			if best, _ := r.find(k.name, 0); best != k {
				continue // the same benchmark at another GOMAXPROCS
			}
			switch {
			case group == "Hooks" && len(parts) == 4 && parts[3] == "karta":
				out = append(out, r.compareRow(k, parts[1]+"/"+parts[2], ""))
			case group == "Karmada" && len(parts) == 4 && parts[3] == "karta":
				out = append(out, r.compareRow(k, parts[1]+"/"+parts[2], "karmada"))
			case group == "Argo" && len(parts) == 4 && parts[3] == "karta":
				out = append(out, r.compareRow(k, parts[1]+"/"+parts[2], "argocd"))
			case group == "Compile" && len(parts) == 2:
				out = append(out, r.compareRow(k, k.name, ""))
			case group == "Registry" && len(parts) == 3 && parts[2] == "karta":
				out = append(out, r.compareRow(k, "Registry/"+parts[1], "eager"))
			case group == "Registry" && len(parts) == 2:
				out = append(out, r.compareRow(k, k.name, ""))
			}
		}
	}
	return out
}

// compareRow is the row of karta benchmark k; baselines are its siblings
// at the same GOMAXPROCS. corpusBaseline, for a corpus row, names the
// corpus's baseline.
func (r *results) compareRow(k key, name string, corpusBaseline string) row {
	ns, _ := r.median(k, "ns/op")
	allocs, _ := r.median(k, "allocs/op")
	corpus := corpusBaseline == "karmada" || corpusBaseline == "argocd"
	per := 1.0
	if corpus {
		if cases, ok := r.median(k, "cases"); ok && cases > 0 {
			per = cases
		}
	}
	rw := row{name: name, ns: ns / per, allocs: allocs / per, gojq: math.NaN(), goRatio: math.NaN(), karmada: math.NaN(), override: math.NaN(), karmadaCached: math.NaN(), argocd: math.NaN(), eager: math.NaN(),
		corpus: corpus, corpusBaseline: corpusBaseline}
	base := strings.TrimSuffix(k.name, "karta")
	against := func(impl string) float64 {
		bk, ok := r.find(base+impl, k.procs)
		if !ok {
			return math.NaN()
		}
		bns, ok := r.median(bk, "ns/op")
		if !ok || ns == 0 {
			return math.NaN()
		}
		return bns / ns
	}
	rw.gojq, rw.goRatio, rw.override = against("gojq"), against("go"), against("override")
	switch corpusBaseline {
	case "karmada":
		rw.karmada = against("karmada")
		rw.karmadaCached = against("karmada-cached")
	case "argocd":
		rw.argocd = against("argocd")
	case "eager":
		rw.eager = against("eager")
	}
	return rw
}

// scaling is the throughput of a Parallel benchmark at GOMAXPROCS 2
// against 1.
type scaling struct {
	name       string
	ns1, ns2   float64
	throughput float64
	// cpu1 and cpu2 are the process's CPU time per call (the cpu-ns/op
	// metric), NaN when not reported.
	cpu1, cpu2 float64
}

func (r *results) scalings() []scaling {
	var out []scaling
	for _, k := range r.order {
		if k.procs != 1 || !strings.HasPrefix(k.name, "Parallel/") {
			continue
		}
		k2, ok := r.find(k.name, 2)
		if !ok {
			continue
		}
		ns1, _ := r.median(k, "ns/op")
		ns2, _ := r.median(k2, "ns/op")
		name := strings.TrimSuffix(strings.TrimPrefix(k.name, "Parallel/"), "/karta")
		s := scaling{name: name, ns1: ns1, ns2: ns2, throughput: ns1 / ns2, cpu1: math.NaN(), cpu2: math.NaN()}
		if c, ok := r.median(k, "cpu-ns/op"); ok {
			s.cpu1 = c
		}
		if c, ok := r.median(k2, "cpu-ns/op"); ok {
			s.cpu2 = c
		}
		out = append(out, s)
	}
	return out
}

// metricLines prints the custom metrics of the memory and per-case
// benchmarks, one line per benchmark.
func (r *results) metricLines() []string {
	var out []string
	for _, k := range r.order {
		var prefix string
		var units []string
		switch {
		case strings.HasPrefix(k.name, "PoolState/"):
			prefix, units = "MEMORY pool-state "+strings.TrimPrefix(k.name, "PoolState/"), []string{"B/state", "B/state-used"}
		case k.name == "MillionCalls":
			prefix, units = "MEMORY million-calls pytorchjob", []string{"heap-B", "heap-delta-B"}
		case k.name == "KarmadaCases":
			prefix, units = "KARMADA-CASES vs-karmada", []string{"cases", "min-ratio", "p10-ratio", "median-ratio"}
		case k.name == "ArgoCases":
			prefix, units = "ARGO-CASES vs-argocd", []string{"cases", "min-ratio", "p10-ratio", "median-ratio"}
		case strings.HasPrefix(k.name, "Webhook/"):
			prefix, units = "WEBHOOK "+strings.TrimPrefix(k.name, "Webhook/"), []string{"req/s", "p50-µs", "p99-µs"}
		case strings.HasPrefix(k.name, "Exports/"):
			prefix, units = "EXPORTS "+strings.TrimPrefix(k.name, "Exports/"), []string{"cases", "ns/op", "allocs/op"}
		case strings.HasPrefix(k.name, "Isolation/"):
			prefix, units = "ISOLATION "+strings.TrimPrefix(k.name, "Isolation/"), []string{"calls/s", "p50-µs", "p99-µs"}
		case strings.HasPrefix(k.name, "ReviseInterleaved/"):
			prefix, units = "REVISE-INTERLEAVED "+strings.TrimPrefix(k.name, "ReviseInterleaved/"), []string{"karta-ns", "vs-gojq", "vs-go"}
		case k.name == "ControllerResync":
			prefix, units = "SCALE controller-resync", []string{"workloads", "pods", "s/resync", "cpu-s/resync", "heap-B/program", "heap-B/workload"}
		case k.name == "ExporterScrape":
			prefix, units = "SCALE exporter-scrape", []string{"workloads", "pods", "series", "s/scrape", "cpu-s/scrape", "summary-B/workload", "objects-B/workload", "ms/summarize"}
		default:
			continue
		}
		line := prefix
		for _, u := range units {
			if v, ok := r.median(k, u); ok {
				line += " " + u + "=" + num(v)
			}
		}
		out = append(out, line)
	}
	return out
}

// slowestCompile is a row holding the slowest Compile's time and the
// largest Compile's allocations (which may be two built-ins'), and how
// many Compile rows there are.
func slowestCompile(rows []row) (row, int) {
	var worst row
	n := 0
	for _, rw := range rows {
		if !strings.HasPrefix(rw.name, "Compile/") {
			continue
		}
		if n == 0 || rw.ns > worst.ns {
			worst.name, worst.ns = rw.name, rw.ns
		}
		worst.allocs = max(worst.allocs, rw.allocs)
		n++
	}
	return worst, n
}

// target is one of the performance targets (docs/performance.md).
type target struct {
	what string
	ok   bool
	got  string
}

// targets checks the targets that the results cover; a target whose
// benchmarks or baselines are missing is left out.
func (r *results) targets(rows []row, scales []scaling) []target {
	byName := map[string]row{}
	for _, rw := range rows {
		byName[rw.name] = rw
	}
	var out []target
	add := func(what string, ok bool, got string) { out = append(out, target{what: what, ok: ok, got: got}) }
	if rw, found := byName["InterpretStatus/pytorchjob"]; found {
		add("InterpretStatus pytorchjob <= 3000 ns and <= 40 allocs", rw.ns <= 3000 && rw.allocs <= 40,
			fmt.Sprintf("%s ns, %s allocs", num(rw.ns), num(rw.allocs)))
		if !math.IsNaN(rw.gojq) {
			add("InterpretStatus pytorchjob >= 20x faster than gojq", rw.gojq >= 20, ratio(rw.gojq))
		}
		if !math.IsNaN(rw.goRatio) {
			add("InterpretStatus pytorchjob within 10x of Go", rw.goRatio >= 0.1, ratio(rw.goRatio))
		}
	}
	for _, w := range []string{"pytorchjob", "jobset", "leaderworkerset"} {
		if rw, found := byName["PlacePod/"+w]; found && !math.IsNaN(rw.gojq) {
			add("PlacePod "+w+" <= 3000 ns and >= 20x faster than gojq", rw.ns <= 3000 && rw.gojq >= 20,
				num(rw.ns)+" ns, "+ratio(rw.gojq))
		}
	}
	// GetGangGroups: 0.5 µs per pod on the 64-pod gangs (perf.Gang64).
	for _, w := range []string{"pytorchjob", "jobset", "leaderworkerset"} {
		if rw, found := byName["GetGangGroups/"+w+"-64pods"]; found {
			add("GetGangGroups "+w+" 64 pods <= 32000 ns (0.5 µs per pod)", rw.ns <= 32000,
				fmt.Sprintf("%s ns, %s ns per pod, %s vs Go", num(rw.ns), num(rw.ns/64), ratio(rw.goRatio)))
		}
	}
	if rw, found := byName["GetPodSpecs/jobset"]; found && !math.IsNaN(rw.gojq) {
		add("GetPodSpecs jobset <= 10000 ns and >= 8x faster than gojq", rw.ns <= 10000 && rw.gojq >= 8,
			num(rw.ns)+" ns, "+ratio(rw.gojq))
	}
	// Issue 29: the kinds whose bundled override became a view, faster
	// than the override and back near their GetPodSpecs before it (28 µs,
	// 5.9 µs and 58 µs, measured before the overrides; 25% for noise).
	for _, rw := range rows {
		if strings.HasPrefix(rw.name, "GetPodSpecs/") && !math.IsNaN(rw.override) {
			add(rw.name+" >= 2x faster than the override its view replaced", rw.override >= 2, ratio(rw.override))
		}
	}
	for _, b := range []struct {
		w      string
		before float64
	}{{"raycluster", 28000}, {"knative-service", 5900}, {"inferenceservice", 58000}} {
		if rw, found := byName["GetPodSpecs/"+b.w]; found {
			add(fmt.Sprintf("GetPodSpecs %s <= %s ns (its figure before the override, +25%%)", b.w, num(b.before*1.25)),
				rw.ns <= b.before*1.25, num(rw.ns)+" ns")
		}
	}
	if rw, found := byName["ReviseSpec/pytorchjob"]; found {
		add("ReviseSpec pytorchjob <= 10000 ns and <= 60 allocs", rw.ns <= 10000 && rw.allocs <= 60,
			fmt.Sprintf("%s ns, %s allocs", num(rw.ns), num(rw.allocs)))
	}
	for _, w := range []string{"pytorchjob", "jobset", "leaderworkerset"} {
		// The interleaved measurement when there is one: on a shared
		// machine its ratios are the ones to trust.
		if k, ok := r.find("ReviseInterleaved/"+w, 0); ok {
			q, okQ := r.median(k, "vs-gojq")
			g, okG := r.median(k, "vs-go")
			if okQ && okG {
				add("ReviseSpec "+w+" >= 10x faster than gojq and within 3x of Go (interleaved)", q >= 10 && g >= 1.0/3,
					ratio(q)+" vs gojq, "+ratio(g)+" vs Go")
				continue
			}
		}
		if rw, found := byName["ReviseSpec/"+w]; found && !math.IsNaN(rw.gojq) && !math.IsNaN(rw.goRatio) {
			add("ReviseSpec "+w+" >= 10x faster than gojq and within 3x of Go", rw.gojq >= 10 && rw.goRatio >= 1.0/3,
				ratio(rw.gojq)+" vs gojq, "+ratio(rw.goRatio)+" vs Go")
		}
	}
	out = append(out, relativeTargets(rows)...)
	var slowest row
	revisions := 0
	for _, rw := range rows {
		if strings.HasPrefix(rw.name, "ReviseSpec/") {
			revisions++
			if rw.ns > slowest.ns {
				slowest = rw
			}
		}
	}
	if revisions > 1 {
		add("ReviseSpec of every built-in <= 30000 ns", slowest.ns <= 30000,
			fmt.Sprintf("%d built-ins, slowest %s %s ns", revisions, strings.TrimPrefix(slowest.name, "ReviseSpec/"), num(slowest.ns)))
	}
	for _, rw := range rows {
		if rw.corpus && !math.IsNaN(rw.karmada) {
			add(rw.name+" >= 10x faster than karmada (mean per case)", rw.karmada >= 10, ratio(rw.karmada))
			if !math.IsNaN(rw.karmadaCached) {
				add(rw.name+" >= 4x faster than karmada-cached (mean per case)", rw.karmadaCached >= 4, ratio(rw.karmadaCached))
			}
		}
	}
	if k, ok := r.find("KarmadaCases", 0); ok {
		if v, ok := r.median(k, "min-ratio"); ok {
			add("every Karmada corpus case >= 10x faster than karmada", v >= 10, "min "+ratio(v))
		}
	}
	for _, rw := range rows {
		if rw.corpus && !math.IsNaN(rw.argocd) {
			add(rw.name+" >= 5x faster than argocd (mean per case)", rw.argocd >= 5, ratio(rw.argocd))
		}
	}
	if worst, n := slowestCompile(rows); n > 0 {
		add(fmt.Sprintf("Compile of each of %d built-ins <= 3 ms and <= 20000 allocs", n), worst.ns <= 3e6 && worst.allocs <= 20000,
			fmt.Sprintf("slowest %s %s ms, most allocs %s", strings.TrimPrefix(worst.name, "Compile/"), num(worst.ns/1e6), num(worst.allocs)))
	}
	if rw, found := byName["Registry/first-answer"]; found {
		add("first answer for one kind from a fresh registry <= 20 ms", rw.ns <= 20e6, num(rw.ns/1e6)+" ms, "+ratio(rw.eager)+" vs eager")
	}
	if rw, found := byName["Registry/compile-all"]; found {
		add("whole catalog compiled <= 300 ms", rw.ns <= 300e6, num(rw.ns/1e6)+" ms")
	}
	for _, s := range scales {
		if strings.HasPrefix(s.name, "InterpretStatus/") || strings.HasPrefix(s.name, "PlacePod/") || strings.HasPrefix(s.name, "ReviseSpec/") || strings.HasPrefix(s.name, "GetGangGroups/") {
			add(s.name+" throughput at GOMAXPROCS=2 >= 1.7x GOMAXPROCS=1", s.throughput >= 1.7, ratio(s.throughput))
		}
	}
	for _, k := range r.order {
		if strings.HasPrefix(k.name, "PoolState/") {
			if v, ok := r.median(k, "B/state-used"); ok {
				add("a pooled state of "+strings.TrimPrefix(k.name, "PoolState/")+" retains <= 300 KB", v <= 300*1024, num(v/1024)+" KB")
			}
		}
		if k.name == "ControllerResync" {
			if v, ok := r.median(k, "s/resync"); ok {
				add("a full resync of 10,000 workloads and 100,000 pods <= 2 s", v <= 2, num(v)+" s")
			}
		}
		if k.name == "MillionCalls" {
			if v, ok := r.median(k, "heap-delta-B"); ok {
				// "Where it was": within 1 MiB of the heap before, the
				// noise of the runtime's own structures.
				add("a million calls leave the heap where it was (within 1 MiB)", math.Abs(v) <= 1<<20, num(v/1024)+" KB")
			}
		}
	}
	return out
}

// relativeLimit is issue 30's bound on a built-in's hook: at most this
// many times PyTorchJob's same hook.
const relativeLimit = 3

// gang64Suffix names the 64-pod gangs GetGangGroups also runs on
// (perf.Gang64): not a built-in's own example, so not held to PyTorchJob's.
const gang64Suffix = "-64pods"

// relativeTargets is issue 30's "no built-in hook more than 3× the time of
// PyTorchJob's same hook": a target per hook of the Hooks rows that
// PyTorchJob and at least one other built-in ran, karta's median ns/op
// over PyTorchJob's, naming the built-ins over the bound (the worst
// first) or, when none is, the slowest.
func relativeTargets(rows []row) []target {
	type over struct {
		name  string
		ratio float64
	}
	var hooks []string
	base := map[string]float64{}
	others := map[string][]over{}
	for _, rw := range rows {
		hook, workload, ok := strings.Cut(rw.name, "/")
		if !ok || strings.HasPrefix(rw.name, "Compile/") || strings.HasPrefix(rw.name, "Registry/") || rw.corpus ||
			strings.HasSuffix(workload, gang64Suffix) {
			continue
		}
		if _, seen := others[hook]; !seen {
			hooks = append(hooks, hook)
			others[hook] = nil
		}
		if workload == "pytorchjob" {
			base[hook] = rw.ns
			continue
		}
		others[hook] = append(others[hook], over{name: workload, ratio: rw.ns})
	}
	var out []target
	for _, hook := range hooks {
		b, ws := base[hook], others[hook]
		if b <= 0 || len(ws) == 0 {
			continue
		}
		for i := range ws {
			ws[i].ratio /= b
		}
		sort.SliceStable(ws, func(i, j int) bool { return ws[i].ratio > ws[j].ratio })
		var names []string
		for _, w := range ws {
			if w.ratio > relativeLimit {
				names = append(names, w.name+" "+ratio(w.ratio))
			}
		}
		got := fmt.Sprintf("%d built-ins, pytorchjob %s ns; ", len(ws)+1, num(b))
		if len(names) == 0 {
			got += "slowest " + ws[0].name + " " + ratio(ws[0].ratio)
		} else {
			got += fmt.Sprintf("%d over: %s", len(names), strings.Join(names, ", "))
		}
		out = append(out, target{what: fmt.Sprintf("%s of every built-in <= %dx pytorchjob's", hook, relativeLimit), ok: len(names) == 0, got: got})
	}
	return out
}

// report writes the summary; the BENCH lines come last.
func report(w io.Writer, r *results) error {
	rows := r.rows()
	if len(rows) == 0 && len(r.order) == 0 {
		return fmt.Errorf("no benchmark results in the input")
	}
	scales := r.scalings()
	var b strings.Builder
	for _, k := range r.order {
		ns, _ := r.median(k, "ns/op")
		allocs, _ := r.median(k, "allocs/op")
		fmt.Fprintf(&b, "MEDIAN %s procs=%d n=%d ns/op=%s allocs/op=%s\n", k.name, k.procs, len(r.samples[k]), num(ns), num(allocs))
	}
	for _, s := range scales {
		fmt.Fprintf(&b, "SCALING %s gomaxprocs1=%s gomaxprocs2=%s throughput=%s", s.name, num(s.ns1), num(s.ns2), ratio(s.throughput))
		if !math.IsNaN(s.cpu1) && !math.IsNaN(s.cpu2) {
			fmt.Fprintf(&b, " cpu-ns/op=%s,%s", num(s.cpu1), num(s.cpu2))
		}
		b.WriteString("\n")
	}
	for _, l := range r.metricLines() {
		b.WriteString(l + "\n")
	}
	for _, t := range r.targets(rows, scales) {
		verdict := "met"
		if !t.ok {
			verdict = "MISSED"
		}
		fmt.Fprintf(&b, "TARGET %s: %s (%s)\n", verdict, t.what, t.got)
	}
	for _, rw := range rows {
		b.WriteString(rw.String() + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
