package interpreter_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/internal/stutter"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/luaapi"
	"github.com/kartalua/karta/object"
)

// The hostile-input suite (issue 6): objects and pods that a control plane
// may be handed by anyone who can create a custom resource. Whatever they
// hold, a hook gives a result or a typed error that names the Karta, the
// hook and what is wrong; never a panic, never a change to the input.

var hostileAll = flag.Bool("hostile.all", false, "run every hostile mutation at every path of every example (minutes); by default each path gets a rotating sample")

// hostileTimeout replaces the 1 s default deadline: the suite runs under
// -race on a shared machine, and a deadline error would only hide what the
// input does.
const hostileTimeout = time.Minute

// mutation replaces one value of an object.
type mutation struct {
	name string
	// value returns the replacement for the value orig.
	value func(orig any) any
}

func constant(v any) func(any) any { return func(any) any { return v } }

// hostileMutations are wrong types, huge and fractional numbers, NaN-like
// strings and invalid UTF-8, in the Go types an unstructured object may
// hold: json.Number (the CLI's decoder), int64 and float64 (JSON decoders
// and Go callers). The kinds alternate so that a sample of consecutive
// mutations mixes them.
var hostileMutations = []mutation{
	{name: "string", value: constant("not-a-number")},
	{name: "fraction", value: fraction},
	{name: "1e300", value: constant(json.Number("1e300"))},
	{name: "string-NaN", value: constant("NaN")},
	{name: "object", value: constant(map[string]any{"x": json.Number("1")})},
	{name: "non-utf8", value: constant("bad\xff\xfe\xc3(")},
	{name: "2^63", value: constant(json.Number("9223372036854775808"))},
	{name: "float-2.5", value: constant(2.5)},
	{name: "array", value: constant([]any{json.Number("1"), "a", nil})},
	{name: "string-Infinity", value: constant("Infinity")},
	{name: "negative", value: constant(json.Number("-1"))},
	{name: "null", value: constant(nil)},
	{name: "string-2.5", value: constant("2.5")},
	{name: "max-int64", value: constant(int64(math.MaxInt64))},
	{name: "bool", value: constant(true)},
	{name: "float-NaN", value: constant(math.NaN())},
	{name: "empty-object", value: constant(map[string]any{})},
	{name: "2^31", value: constant(json.Number("2147483648"))},
	{name: "string--Infinity", value: constant("-Infinity")},
	{name: "empty-array", value: constant([]any{})},
	{name: "max-int32", value: constant(json.Number("2147483647"))},
	{name: "string-1e3", value: constant("1e3")},
	{name: "number", value: constant(json.Number("7"))},
	{name: "float-Inf", value: constant(math.Inf(1))},
	{name: "string-hex", value: constant("0x10")},
	{name: "empty-string", value: constant("")},
	{name: "minus-zero", value: constant(json.Number("-0"))},
	{name: "string-arabic-digit", value: constant("٣")},
	{name: "string-huge", value: constant("99999999999999999999")},
	{name: "non-utf8-digits", value: constant("3\xff")},
}

// fraction is the value plus 0.1 when it is an integer (4 → 4.1: no
// arithmetic of the built-ins makes that integral again), else 2.1.
func fraction(orig any) any {
	if f, ok := luaapi.GoNumber(orig); ok && f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return json.Number(strconv.FormatInt(int64(f), 10) + ".1")
	}
	return json.Number("2.1")
}

// hostileCase is a built-in with its compiled Program and example.
type hostileCase struct {
	name string
	p    *interpreter.Program
	obj  map[string]any
	pods []*unstructured.Unstructured
	revs []interpreter.Revision
	// words are the identifiers in the Karta (its jq paths and label keys).
	words map[string]bool
	// scales are the Karta's scale paths, for the oracle.
	scales []scaleExpr
}

var (
	hostileOnce     sync.Once
	hostileCompiled []*hostileCase
)

// hostileCases compiles every built-in once for all the tests of this
// suite (Programs are safe for concurrent use and hold no per-call state);
// a test that fails to set them up fails, and so does every later one.
func hostileCases(t *testing.T) []*hostileCase {
	t.Helper()
	hostileOnce.Do(func() { hostileCompiled = loadHostileCases(t) })
	require.NotEmpty(t, hostileCompiled, "the built-ins and their examples load (see the first failing test)")
	return hostileCompiled
}

func loadHostileCases(t *testing.T) []*hostileCase {
	t.Helper()
	all, err := builtin.All()
	require.NoError(t, err)
	require.NotEmpty(t, all)
	var out []*hostileCase
	for _, b := range all {
		p, err := b.Compile(interpreter.Options{Limits: interpreter.Limits{Timeout: hostileTimeout}})
		require.NoError(t, err)
		dir := filepath.Join("..", "examples", b.Name)
		c := &hostileCase{name: b.Name, p: p, words: kartaWords(t, b), scales: scaleExprs(t, b.Karta)}
		docs := decodeFile(t, filepath.Join(dir, "running.yaml"))
		require.Len(t, docs, 1)
		c.obj = docs[0].Object
		for _, it := range object.Items(decodeFile(t, filepath.Join(dir, "pods.yaml"))) {
			c.pods = append(c.pods, &unstructured.Unstructured{Object: it})
		}
		data, err := os.ReadFile(filepath.Join(dir, "revisions.yaml"))
		require.NoError(t, err)
		v, err := object.DecodeValue(data, "revisions.yaml")
		require.NoError(t, err)
		c.revs, err = interpreter.DecodeRevisions(v)
		require.NoError(t, err)
		out = append(out, c)
	}
	return out
}

func decodeFile(t *testing.T, file string) []*object.Document {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	docs, err := object.Decode(data, file)
	require.NoError(t, err)
	return docs
}

var identifier = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// kartaWords collects the identifiers of a built-in's Karta and script: a
// path of the object whose every key is one of them is one the Karta may
// read.
func kartaWords(t *testing.T, b *builtin.Builtin) map[string]bool {
	t.Helper()
	data, err := json.Marshal(b.Karta.Spec)
	require.NoError(t, err)
	words := map[string]bool{}
	for _, w := range identifier.FindAllString(string(data)+b.Script, -1) {
		words[w] = true
	}
	return words
}

// valuePath is a location in an object: string keys and int indexes.
type valuePath []any

func (p valuePath) String() string {
	var sb strings.Builder
	for _, s := range p {
		switch x := s.(type) {
		case string:
			sb.WriteString("." + x)
		case int:
			sb.WriteString("[" + strconv.Itoa(x) + "]")
		}
	}
	return sb.String()
}

// allPaths lists every value below the root, parents before children.
func allPaths(v any, at valuePath, out *[]valuePath) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := append(slices.Clone(at), k)
			*out = append(*out, p)
			allPaths(x[k], p, out)
		}
	case []any:
		for i, e := range x {
			p := append(slices.Clone(at), i)
			*out = append(*out, p)
			allPaths(e, p, out)
		}
	}
}

// read reports whether every key of p is a word of the Karta.
func (c *hostileCase) read(p valuePath) bool {
	for _, s := range p {
		if k, ok := s.(string); ok && !c.words[k] {
			return false
		}
	}
	return true
}

func getPath(v any, p valuePath) any {
	for _, s := range p {
		switch k := s.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}

// withValue returns a deep copy of obj with the value at p replaced.
func withValue(obj map[string]any, p valuePath, v any) map[string]any {
	out := deepCopy(obj).(map[string]any)
	var parent any = out
	for _, s := range p[:len(p)-1] {
		parent = getPath(parent, valuePath{s})
	}
	switch k := p[len(p)-1].(type) {
	case string:
		parent.(map[string]any)[k] = v
	case int:
		parent.([]any)[k] = v
	}
	return out
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = deepCopy(e)
		}
		return a
	}
	return v
}

// sameValue is reflect.DeepEqual where NaN equals NaN: the input is
// unchanged if it holds the very same values.
func sameValue(a, b any) bool {
	if fa, ok := a.(float64); ok {
		fb, ok := b.(float64)
		return ok && (fa == fb || math.IsNaN(fa) && math.IsNaN(fb))
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, e := range x {
			f, ok := y[k]
			if !ok || !sameValue(e, f) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// outcome is what the hooks gave for one object.
type outcome struct {
	specs *interpreter.PodSpecs
	gang  *interpreter.GangResult
}

// runHooks runs every hook of c on obj and checks each result or error;
// where names the input in failures.
func (c *hostileCase) runHooks(t *testing.T, where string, obj map[string]any, pods []*unstructured.Unstructured) outcome {
	t.Helper()
	ctx := context.Background()
	u := &unstructured.Unstructured{Object: obj}
	before := deepCopy(obj)
	podsBefore := make([]any, len(pods))
	for i, pod := range pods {
		podsBefore[i] = deepCopy(pod.Object)
	}
	var out outcome
	callHook(t, c.name, where, interpreter.HookGetPodSpecs, func() (any, error) {
		res, err := c.p.GetPodSpecs(ctx, u)
		if err == nil {
			checkSpecs(t, where, res)
			out.specs = res
		}
		return res, err
	})
	callHook(t, c.name, where, interpreter.HookInterpretStatus, func() (any, error) {
		res, err := c.p.InterpretStatus(ctx, u)
		if err == nil {
			assert.NotEmpty(t, res.Status, "%s: InterpretStatus: empty status", where)
			assert.NotNil(t, res.Matched, "%s: InterpretStatus: matched is nil", where)
			assert.NotNil(t, res.Conditions, "%s: InterpretStatus: conditions is nil", where)
		}
		return res, err
	})
	callHook(t, c.name, where, interpreter.HookReviseSpec, func() (any, error) {
		res, err := c.p.ReviseSpec(ctx, u, c.revs)
		if err == nil {
			require.NotNil(t, res.Object, "%s: ReviseSpec: no object", where)
			return res.Patch, nil
		}
		return nil, err
	})
	for _, h := range []interpreter.Hook{interpreter.HookSuspend, interpreter.HookResume} {
		if !c.p.HookEnabled(h) {
			continue
		}
		callHook(t, c.name, where, h, func() (any, error) {
			var res *interpreter.Revised
			var err error
			if h == interpreter.HookSuspend {
				res, err = c.p.Suspend(ctx, u)
			} else {
				res, err = c.p.Resume(ctx, u)
			}
			if err != nil {
				return nil, err
			}
			return res.Patch, nil
		})
	}
	if len(pods) > 0 {
		callHook(t, c.name, where, interpreter.HookGetGangGroups, func() (any, error) {
			res, err := c.p.GetGangGroups(ctx, u, pods)
			if err == nil {
				checkGang(t, where, pods, res)
				out.gang = res
			}
			return res, err
		})
		// PlacePod on the first pod the gang placed, else the first pod.
		pod := pods[0]
		if out.gang != nil && len(out.gang.Placements) > 0 {
			for _, p := range pods {
				if interpreter.PodKey(p.Object) == out.gang.Placements[0].Pod {
					pod = p
					break
				}
			}
		}
		callHook(t, c.name, where, "PlacePod", func() (any, error) {
			return c.p.PlacePod(ctx, u, pod)
		})
	}
	if !sameValue(before, obj) {
		t.Errorf("%s: a hook modified its input object", where)
	}
	for i, pod := range pods {
		if !sameValue(podsBefore[i], pod.Object) {
			t.Errorf("%s: a hook modified pod %d", where, i)
		}
	}
	return out
}

// callHook runs one hook and checks that it neither panicked nor failed
// without saying where: an error is a *interpreter.HookError or a
// *luaapi.LimitError naming the Karta and the hook, with a message after
// them; a result encodes as JSON (what the CLI prints).
func callHook(t *testing.T, karta, where string, hook interpreter.Hook, f func() (any, error)) {
	t.Helper()
	var res any
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%s: %s panicked: %v\n%s", where, hook, r, debug.Stack())
			}
		}()
		res, err = f()
	}()
	if err == nil {
		// float-NaN and float-Inf put values JSON cannot hold into the
		// input, and results share the input's values.
		var unsupported *json.UnsupportedValueError
		_, merr := json.Marshal(res)
		if merr != nil && !(errors.As(merr, &unsupported) && (strings.HasSuffix(where, "=float-NaN") || strings.HasSuffix(where, "=float-Inf"))) {
			t.Errorf("%s: %s: the result does not encode as JSON: %v", where, hook, merr)
		}
		return
	}
	checkHookError(t, karta, where, hook, err)
}

func checkHookError(t *testing.T, karta, where string, hook interpreter.Hook, err error) {
	t.Helper()
	msg := err.Error()
	var pe *luaapi.PanicError
	if errors.As(err, &pe) {
		t.Errorf("%s: %s: a Go panic inside the call: %s\n%s", where, hook, pe.Msg, pe.Stack)
		return
	}
	for _, bad := range []string{"runtime error", "goroutine ", "interface conversion", "nil pointer", "index out of range", "panic"} {
		if strings.Contains(msg, bad) {
			t.Errorf("%s: %s: the error looks like a crash (%q): %s", where, hook, bad, msg)
		}
	}
	var he *interpreter.HookError
	var le *luaapi.LimitError
	var ke *interpreter.KindMismatchError
	switch {
	case errors.As(err, &ke):
		assert.Equal(t, karta, ke.Karta, "%s: %s: KindMismatchError names the Karta", where, hook)
	case errors.As(err, &le):
		assert.Equal(t, karta, le.Karta, "%s: %s: LimitError names the Karta", where, hook)
		assert.Equal(t, string(hook), le.Hook, "%s: %s: LimitError names the hook", where, hook)
	case errors.As(err, &he):
		assert.Equal(t, karta, he.Karta, "%s: %s: HookError names the Karta", where, hook)
		assert.Equal(t, hook, he.Hook, "%s: %s: HookError names the hook", where, hook)
	default:
		t.Errorf("%s: %s: an untyped error %T: %s", where, hook, err, msg)
		return
	}
	prefix := fmt.Sprintf("karta %q: %s: ", karta, hook)
	if !strings.HasPrefix(msg, prefix) || len(strings.TrimSpace(strings.TrimPrefix(msg, prefix))) < 5 {
		t.Errorf("%s: %s: the error does not say what is wrong after %q: %q", where, hook, prefix, msg)
	}
	if s := stutter.Find(msg); s != "" {
		t.Errorf("%s: %s: the error says %q twice: %q", where, hook, s, msg)
	}
}

// checkSpecs checks docs/cli.md's shape of a GetPodSpecs result.
func checkSpecs(t *testing.T, where string, res *interpreter.PodSpecs) {
	t.Helper()
	require.NotNil(t, res.Items, "%s: GetPodSpecs: items is nil", where)
	for _, it := range res.Items {
		styles := 0
		for _, set := range []bool{it.PodTemplateSpec != nil, it.PodSpec != nil, it.Fragmented != nil} {
			if set {
				styles++
			}
		}
		assert.Equal(t, 1, styles, "%s: GetPodSpecs: item %s/%s has %d styles", where, it.Component, it.Instance, styles)
		if it.Scale == nil {
			continue
		}
		for _, n := range []*int64{it.Scale.Replicas, it.Scale.MinReplicas, it.Scale.MaxReplicas} {
			if n != nil && (*n < 0 || *n > math.MaxInt32) {
				t.Errorf("%s: GetPodSpecs: item %s/%s: scale %d outside 0…2147483647", where, it.Component, it.Instance, *n)
			}
		}
	}
}

// checkGang checks GetGangGroups' invariants: every pod exactly once, in
// placements (and in exactly the group named) or unmatched with a reason;
// minMember ≥ 1.
func checkGang(t *testing.T, where string, pods []*unstructured.Unstructured, res *interpreter.GangResult) {
	t.Helper()
	require.NotNil(t, res.Groups, "%s: GetGangGroups: groups is nil", where)
	require.NotNil(t, res.Placements, "%s: GetGangGroups: placements is nil", where)
	require.NotNil(t, res.Unmatched, "%s: GetGangGroups: unmatched is nil", where)
	if !assert.Equal(t, len(pods), len(res.Placements)+len(res.Unmatched), "%s: GetGangGroups: every pod exactly once", where) {
		return
	}
	pl, un := 0, 0
	for _, pod := range pods {
		name := interpreter.PodKey(pod.Object)
		switch {
		case pl < len(res.Placements) && res.Placements[pl].Pod == name:
			pl++
		case un < len(res.Unmatched) && res.Unmatched[un].Pod == name:
			assert.NotEmpty(t, res.Unmatched[un].Reason, "%s: GetGangGroups: pod %s unmatched without a reason", where, name)
			un++
		default:
			t.Errorf("%s: GetGangGroups: pod %s is not next in placements or unmatched", where, name)
			return
		}
	}
	members := map[string]int{}
	for _, g := range res.Groups {
		assert.GreaterOrEqual(t, g.MinMember, int64(1), "%s: GetGangGroups: group %s minMember", where, g.Name)
		for _, sg := range g.SubGroups {
			assert.GreaterOrEqual(t, sg.MinMember, int64(0), "%s: GetGangGroups: subgroup %s/%s minMember", where, g.Name, sg.Name)
		}
		for _, p := range g.Pods {
			members[g.Name+"\x00"+p]++
		}
	}
	// Pods are named namespace/name, and a hostile list may name two pods
	// alike: each placed pod is in its group once, so a name given twice
	// is listed twice.
	placed := map[string]int{}
	for _, p := range res.Placements {
		placed[p.Group+"\x00"+p.Pod]++
	}
	for k, n := range members {
		if placed[k] != n {
			group, pod, _ := strings.Cut(k, "\x00")
			t.Errorf("%s: GetGangGroups: group %q lists pod %s %d times, for %d placements", where, group, pod, n, placed[k])
		}
	}
	for k, n := range placed {
		if members[k] == 0 {
			group, pod, _ := strings.Cut(k, "\x00")
			t.Errorf("%s: GetGangGroups: %d placed pod(s) %s not in their group %q", where, n, pod, group)
		}
	}
}

// sampler picks the mutations of each path. The whole matrix (some 80 000
// hook calls, 40 s; minutes under -race) is -hostile.all. By default a
// path the Karta reads (every key of it is a word of the Karta) gets
// readSample consecutive mutations, and a number it reads also the
// fraction (an invalid scale value), while every otherSample-th other path gets
// one; the start rotates, so that each mutation meets many paths.
type sampler struct{ read, other int }

const (
	readSample  = 2
	otherSample = 8
)

func (s *sampler) pick(c *hostileCase, p valuePath, orig any) []mutation {
	if *hostileAll {
		return hostileMutations
	}
	n := len(hostileMutations)
	if !c.read(p) {
		s.other++
		if s.other%otherSample != 0 {
			return nil
		}
		return []mutation{hostileMutations[(s.other/otherSample)%n]}
	}
	var out []mutation
	for i := range readSample {
		out = append(out, hostileMutations[(s.read*readSample+i)%n])
	}
	s.read++
	if _, isNum := luaapi.GoNumber(orig); isNum && !slices.ContainsFunc(out, func(m mutation) bool { return m.name == "fraction" }) {
		out = append(out, hostileMutations[slices.IndexFunc(hostileMutations, func(m mutation) bool { return m.name == "fraction" })])
	}
	return out
}

// TestHostileObjects mutates each built-in's running example at every
// path: wrong types, huge and fractional numbers, NaN-like strings and
// invalid UTF-8 (a sample of them, see sampler), and runs every hook on
// the result: the example's revisions and pods, Suspend and Resume where
// defined.
func TestHostileObjects(t *testing.T) {
	for _, c := range hostileCases(t) {
		t.Run(c.name, func(t *testing.T) {
			base := c.runHooks(t, "unmutated", c.obj, c.pods)
			require.NotNil(t, base.specs, "the example works")
			c.checkScales(t, "unmutated", c.obj, base.specs)
			var paths []valuePath
			allPaths(c.obj, nil, &paths)
			var s sampler
			for _, p := range paths {
				orig := getPath(c.obj, p)
				for _, m := range s.pick(c, p, orig) {
					where := fmt.Sprintf("%s%s=%s", c.name, p, m.name)
					mutated := withValue(c.obj, p, m.value(orig))
					got := c.runHooks(t, where, mutated, c.pods)
					c.checkScales(t, where, mutated, got.specs)
				}
			}
		})
	}
}

// podMutation changes a list of pods.
type podMutation struct {
	name string
	f    func(pods []map[string]any) []map[string]any
}

func eachPod(f func(i int, pod map[string]any)) func([]map[string]any) []map[string]any {
	return func(pods []map[string]any) []map[string]any {
		for i, pod := range pods {
			f(i, pod)
		}
		return pods
	}
}

func podMeta(pod map[string]any) map[string]any {
	m, ok := pod["metadata"].(map[string]any)
	if !ok {
		m = map[string]any{}
		pod["metadata"] = m
	}
	return m
}

var hostilePodMutations = []podMutation{
	{"no-labels", eachPod(func(_ int, pod map[string]any) { delete(podMeta(pod), "labels") })},
	{"no-annotations", eachPod(func(_ int, pod map[string]any) { delete(podMeta(pod), "annotations") })},
	{"no-metadata", eachPod(func(_ int, pod map[string]any) { delete(pod, "metadata") })},
	{"empty-pods", eachPod(func(_ int, pod map[string]any) { clear(pod) })},
	{"labels-string", eachPod(func(_ int, pod map[string]any) { podMeta(pod)["labels"] = "app=x" })},
	{"labels-array", eachPod(func(_ int, pod map[string]any) { podMeta(pod)["labels"] = []any{"a"} })},
	{"label-values-wrong-types", eachPod(func(i int, pod map[string]any) {
		labels, _ := podMeta(pod)["labels"].(map[string]any)
		wrong := []any{json.Number("3"), nil, true, map[string]any{}, []any{}, json.Number("2.5"), "NaN", "bad\xff"}
		for k := range labels {
			labels[k] = wrong[(i+len(k))%len(wrong)]
		}
	})},
	{"annotation-values-wrong-types", eachPod(func(i int, pod map[string]any) {
		annotations, _ := podMeta(pod)["annotations"].(map[string]any)
		for k := range annotations {
			annotations[k] = []any{json.Number("1e300"), nil}[(i+len(k))%2]
		}
	})},
	{"name-and-namespace-wrong-types", eachPod(func(i int, pod map[string]any) {
		podMeta(pod)["name"] = []any{json.Number("7"), nil, map[string]any{}, true}[i%4]
		podMeta(pod)["namespace"] = []any{json.Number("1.5"), []any{}, "", nil}[i%4]
	})},
	{"no-names", eachPod(func(_ int, pod map[string]any) {
		delete(podMeta(pod), "name")
		delete(podMeta(pod), "namespace")
	})},
	{"non-utf8-names", eachPod(func(i int, pod map[string]any) {
		podMeta(pod)["name"] = fmt.Sprintf("pod-\xff%d", i)
		podMeta(pod)["uid"] = "\xfe\xff"
	})},
	{"duplicate-names", eachPod(func(_ int, pod map[string]any) { podMeta(pod)["name"] = "same" })},
	{"every-pod-twice", func(pods []map[string]any) []map[string]any {
		out := make([]map[string]any, 0, 2*len(pods))
		for _, pod := range pods {
			out = append(out, pod, deepCopy(pod).(map[string]any))
		}
		return out
	}},
	{"spec-and-status-wrong-types", eachPod(func(i int, pod map[string]any) {
		pod["spec"] = []any{"x"}
		pod["status"] = "Running"
	})},
}

// TestHostilePods runs GetGangGroups and PlacePod (and the other hooks) on
// each built-in's example pods made hostile: without labels or metadata,
// with labels of the wrong types, duplicate names (the same namespace/name
// twice), invalid UTF-8. Every pod appears exactly once, placed or
// unmatched with a reason; nothing panics.
func TestHostilePods(t *testing.T) {
	for _, c := range hostileCases(t) {
		t.Run(c.name, func(t *testing.T) {
			for _, m := range hostilePodMutations {
				objs := make([]map[string]any, len(c.pods))
				for i, pod := range c.pods {
					objs[i] = deepCopy(pod.Object).(map[string]any)
				}
				objs = m.f(objs)
				pods := make([]*unstructured.Unstructured, len(objs))
				for i, o := range objs {
					pods[i] = &unstructured.Unstructured{Object: o}
				}
				c.runHooks(t, c.name+" pods "+m.name, c.obj, pods)
			}
		})
	}
}

// TestDuplicatePods pins what a pod list naming a pod twice gives: each
// entry is placed (or unmatched) like the original, so a group lists the
// name twice, and minMember, a property of the object, does
// not change.
func TestDuplicatePods(t *testing.T) {
	for _, c := range hostileCases(t) {
		if c.name != "jobset" && c.name != "leaderworkerset" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			u := &unstructured.Unstructured{Object: c.obj}
			once, err := c.p.GetGangGroups(ctx, u, c.pods)
			require.NoError(t, err)
			require.NotEmpty(t, once.Groups)
			var twice []*unstructured.Unstructured
			for _, pod := range c.pods {
				twice = append(twice, pod, pod)
			}
			got, err := c.p.GetGangGroups(ctx, u, twice)
			require.NoError(t, err)
			checkGang(t, c.name+" every pod twice", twice, got)
			require.Len(t, got.Groups, len(once.Groups))
			for i, g := range got.Groups {
				assert.Equal(t, once.Groups[i].MinMember, g.MinMember, "group %s", g.Name)
				var want []string
				for _, p := range once.Groups[i].Pods {
					want = append(want, p, p)
				}
				assert.Equal(t, want, g.Pods, "group %s", g.Name)
			}
			for i, pl := range got.Placements {
				assert.Equal(t, once.Placements[i/2], pl)
			}
			for i, un := range got.Unmatched {
				assert.Equal(t, once.Unmatched[i/2], un)
			}
		})
	}
}
