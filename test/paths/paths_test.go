// Package paths holds issue 30's differential test across the ways a
// Karta is run: one question, asked of every built-in on every example
// state and on malformed variants of it, must get one answer whichever
// path answers it — the Program in process, `karta serve` over HTTP, the
// Karmada export under karta's Karmada runner, and the Argo CD export
// under karta's Argo CD runner — or every path must refuse.
package paths

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/argo"
	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/internal/corpus"
	"github.com/kartalua/karta/internal/exampledir"
	"github.com/kartalua/karta/internal/jqlua"
	"github.com/kartalua/karta/internal/testobj"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/luaapi"
	"github.com/kartalua/karta/webhook"
)

// answer is what one path says to one question: a value in JSON form, or
// a refusal.
type answer struct {
	value any
	err   error
}

func (a answer) String() string {
	if a.err != nil {
		return "refused: " + a.err.Error()
	}
	b, _ := json.Marshal(a.value)
	return string(b)
}

// agree reports whether two answers are the same: equal values, or both
// refusals (the paths word their errors differently: a Lua error from an
// export carries its chunk and line).
func agree(a, b answer) bool {
	return sameAnswer(a, b) || luaCannotTell(a, b)
}

// luaCannotTell reports the difference the exports cannot avoid (docs/
// jq.md, "Karmada's values"): jq refuses to index an empty
// object by a number, where an array was expected (`{}[0]`, gojq's "expected
// an array but got: object ({})"), while Karmada's and Argo CD's runtimes
// decode `{}` and `[]` into one value, the empty Lua table, so the export
// reads it as an empty array; and the other way round, jq refuses to index
// `[]` by a key ("expected an object but got: array ([])") or to ask it
// `has("k")`, where the exports read an empty object. Where karta's own rules read a list (the
// conditions, containersPath), `{}` is an empty list on every path.
func luaCannotTell(inProcess, export answer) bool {
	if inProcess.err == nil || export.err != nil {
		return false
	}
	// gojq names the value it refuses after a colon: an empty one is the
	// class ("expected an array but got: object ({})", "has(\"k\") cannot
	// be applied to: array ([])", …).
	return emptyRefused(inProcess.err.Error())
}

// emptyRefused reports whether gojq's message msg refuses an empty object
// or an empty array, a value the exports decode as one empty table: as the
// value after a colon or either operand of a binary operator (`cannot
// add: string ("a") and array ([])`).
func emptyRefused(msg string) bool {
	for _, refused := range []string{"object ({})", "array ([])"} {
		if strings.Contains(msg, ": "+refused) || strings.Contains(msg, " and "+refused) {
			return true
		}
	}
	return false
}

func TestEmptyRefused(t *testing.T) {
	for msg, want := range map[string]bool{
		`expected an array but got: object ({})`:                 true,
		`has("k") cannot be applied to: array ([])`:              true,
		`cannot add: string ("kubeflow.org/v1/") and array ([])`: true,
		`cannot subtract: object ({}) and number (1)`:            true,
		`cannot add: string ("a") and array ([1])`:               false,
		`expected an object but got: array ([null])`:             false,
		`cannot add: string ("array ([])") and number (1)`:       false,
	} {
		assert.Equal(t, want, emptyRefused(msg), msg)
	}
}

// wordedByKind reports whether an export's refusal words the values it
// refuses as in process, by their kind alone (docs/jq.md, "Karmada's
// values"): where gojq's message shows a refused value's JSON preview
// (`cannot subtract: string ("3") and number (1)`), the export's error
// ends with that message as jqlua.ExportMessage words it (`cannot
// subtract: string and number`) from the first refused value's kind on;
// what wraps the message before it differs by path (the export's names
// its chunk and line, in process its expression). compared is false where
// there is no such message to compare: an answer, or an in-process error
// that shows no preview.
func wordedByKind(inProcess, export answer) (ok, compared bool) {
	if inProcess.err == nil || export.err == nil {
		return true, false
	}
	in := inProcess.err.Error()
	if emptyRefused(in) {
		// The class luaCannotTell admits: the export read the empty table
		// as the other kind and went on, so a refusal of its own, if it
		// makes one, is about something else.
		return true, false
	}
	want := jqlua.ExportMessage(in)
	if want == in {
		return true, false
	}
	// first is where the first preview was cut: right after its kind,
	// which a space precedes.
	first := 0
	for first < len(want) && want[first] == in[first] {
		first++
	}
	kind := strings.LastIndex(want[:first], " ") + 1
	got := export.err.Error()
	common := 0
	for common < len(want) && common < len(got) && want[len(want)-1-common] == got[len(got)-1-common] {
		common++
	}
	return len(want)-common <= kind, true
}

func sameAnswer(a, b answer) bool {
	if a.err != nil || b.err != nil {
		return a.err != nil && b.err != nil
	}
	if empty(a.value) && empty(b.value) {
		return true
	}
	ja, _ := json.Marshal(a.value)
	jb, _ := json.Marshal(b.value)
	return bytes.Equal(ja, jb)
}

// empty reports whether an answer is no list at all or an empty one, which
// Karmada's types do not tell apart (its components and dependencies are
// `omitempty` on the wire).
func empty(v any) bool {
	l, ok := v.([]any)
	return v == nil || ok && len(l) == 0
}

// jsonForm is v as encoding/json reads it back: what a path's answer is on
// the wire, whatever Go types it was built from.
func jsonForm(t *testing.T, v any) any {
	t.Helper()
	if v == nil {
		return nil
	}
	return testobj.JSONRoundTrip(t, v)
}

// karmadaOps are Karmada's operations asked of a path.
type karmadaOps interface {
	GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *karmada.ReplicaRequirements, error)
	GetComponents(ctx context.Context, obj *unstructured.Unstructured) ([]karmada.Component, error)
	ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, error)
	ReflectStatus(ctx context.Context, obj *unstructured.Unstructured) (map[string]any, error)
	InterpretHealth(ctx context.Context, obj *unstructured.Unstructured) (bool, error)
	GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]karmada.DependentObjectReference, error)
}

// questions asks every Karmada operation the export carries of ops, by
// operation name.
func questions(t *testing.T, ops karmadaOps, enabled func(karmada.Operation) bool, obj *unstructured.Unstructured) map[karmada.Operation]answer {
	t.Helper()
	ctx := context.Background()
	out := map[karmada.Operation]answer{}
	ask := func(op karmada.Operation, f func() (any, error)) {
		if !enabled(op) {
			return
		}
		v, err := f()
		if err != nil {
			out[op] = answer{err: err}
			return
		}
		out[op] = answer{value: jsonForm(t, v)}
	}
	ask(karmada.OpInterpretReplica, func() (any, error) {
		n, req, err := ops.GetReplicas(ctx, obj.DeepCopy())
		return []any{n, req}, err
	})
	ask(karmada.OpInterpretComponent, func() (any, error) { return ops.GetComponents(ctx, obj.DeepCopy()) })
	ask(karmada.OpReviseReplica, func() (any, error) {
		r, err := ops.ReviseReplica(ctx, obj.DeepCopy(), 5)
		if err != nil || r == nil {
			return nil, err
		}
		return r.Object, nil
	})
	ask(karmada.OpInterpretStatus, func() (any, error) { return ops.ReflectStatus(ctx, obj.DeepCopy()) })
	ask(karmada.OpInterpretHealth, func() (any, error) { return ops.InterpretHealth(ctx, obj.DeepCopy()) })
	ask(karmada.OpInterpretDependency, func() (any, error) { return ops.GetDependencies(ctx, obj.DeepCopy()) })
	return out
}

// served asks Karmada's operations of `karta serve`'s handler, over HTTP
// as Karmada's webhook client does, and reads the answers back into the
// library's types.
type served struct {
	t *testing.T
	h http.Handler
}

func (s served) review(op karmada.Operation, obj *unstructured.Unstructured, extra map[string]any) (*webhook.ResourceInterpreterResponse, error) {
	raw, err := json.Marshal(obj.Object)
	require.NoError(s.t, err)
	gvk := obj.GroupVersionKind()
	req := map[string]any{
		"uid":       "u",
		"kind":      map[string]string{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind},
		"name":      obj.GetName(),
		"namespace": obj.GetNamespace(),
		"operation": op,
		"object":    json.RawMessage(raw),
	}
	for k, v := range extra {
		req[k] = v
	}
	body, err := json.Marshal(map[string]any{"apiVersion": webhook.ContextAPIVersion, "kind": webhook.ContextKind, "request": req})
	require.NoError(s.t, err)
	r := httptest.NewRequest(http.MethodPost, "/interpret", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, r)
	var rc webhook.ResourceInterpreterContext
	require.NoError(s.t, json.Unmarshal(w.Body.Bytes(), &rc), w.Body.String())
	require.NotNil(s.t, rc.Response, w.Body.String())
	if !rc.Response.Successful {
		msg := ""
		if rc.Response.Status != nil {
			msg = fmt.Sprintf("%d %s", rc.Response.Status.Code, rc.Response.Status.Message)
		}
		return nil, fmt.Errorf("serve: %s", msg)
	}
	return rc.Response, nil
}

func (s served) patched(obj *unstructured.Unstructured, resp *webhook.ResourceInterpreterResponse) (*unstructured.Unstructured, error) {
	raw, err := json.Marshal(obj.Object)
	require.NoError(s.t, err)
	if len(resp.Patch) > 0 {
		p, err := jsonpatch.DecodePatch(resp.Patch)
		require.NoError(s.t, err)
		if raw, err = p.Apply(raw); err != nil {
			return nil, err
		}
	}
	out := map[string]any{}
	require.NoError(s.t, json.Unmarshal(raw, &out))
	return &unstructured.Unstructured{Object: out}, nil
}

func (s served) GetReplicas(_ context.Context, obj *unstructured.Unstructured) (int32, *karmada.ReplicaRequirements, error) {
	resp, err := s.review(karmada.OpInterpretReplica, obj, nil)
	if err != nil {
		return 0, nil, err
	}
	var n int32
	if resp.Replicas != nil {
		n = *resp.Replicas
	}
	return n, resp.ReplicaRequirements, nil
}

func (s served) GetComponents(_ context.Context, obj *unstructured.Unstructured) ([]karmada.Component, error) {
	resp, err := s.review(karmada.OpInterpretComponent, obj, nil)
	if err != nil {
		return nil, err
	}
	return resp.Components, nil
}

func (s served) ReviseReplica(_ context.Context, obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, error) {
	resp, err := s.review(karmada.OpReviseReplica, obj, map[string]any{"replicas": replicas})
	if err != nil {
		return nil, err
	}
	return s.patched(obj, resp)
}

func (s served) ReflectStatus(_ context.Context, obj *unstructured.Unstructured) (map[string]any, error) {
	resp, err := s.review(karmada.OpInterpretStatus, obj, nil)
	if err != nil || resp.RawStatus == nil || len(resp.RawStatus.Raw) == 0 {
		return nil, err
	}
	var out map[string]any
	require.NoError(s.t, json.Unmarshal(resp.RawStatus.Raw, &out))
	return out, nil
}

func (s served) InterpretHealth(_ context.Context, obj *unstructured.Unstructured) (bool, error) {
	resp, err := s.review(karmada.OpInterpretHealth, obj, nil)
	if err != nil {
		return false, err
	}
	return resp.Healthy != nil && *resp.Healthy, nil
}

func (s served) GetDependencies(_ context.Context, obj *unstructured.Unstructured) ([]karmada.DependentObjectReference, error) {
	resp, err := s.review(karmada.OpInterpretDependency, obj, nil)
	if err != nil {
		return nil, err
	}
	return resp.Dependencies, nil
}

// argoHealth is what Argo CD shows for obj in process: the Karta's status
// as its Argo CD word, with the conditions' message.
func argoHealth(t *testing.T, p *interpreter.Program, obj *unstructured.Unstructured) answer {
	t.Helper()
	st, err := p.InterpretStatus(context.Background(), obj.DeepCopy())
	if err != nil {
		return answer{err: err}
	}
	h := argo.Health{}
	if w, ok := argo.HealthWords(argo.IsBatch(p.Karta()))[st.Status]; ok {
		h = argo.Health{Status: w, Message: argo.HealthMessage(st.Conditions)}
	}
	return answer{value: jsonForm(t, h)}
}

// states are the example states of a built-in, in the form a controller
// holds them.
func states(t testing.TB, name string) map[string]*unstructured.Unstructured {
	t.Helper()
	files, err := exampledir.States(filepath.Join("..", "..", "examples", name))
	require.NoError(t, err)
	out := map[string]*unstructured.Unstructured{}
	for _, f := range files {
		objs, err := corpus.LoadObjects(f)
		require.NoError(t, err, f)
		for i, o := range objs {
			out[fmt.Sprintf("%s#%d", filepath.Base(f), i)] = o
		}
	}
	return out
}

// pathLimits are the default limits, but for a wall clock no loaded test
// machine reaches: a deadline hit on one path would be a difference in
// load, not in meaning.
var pathLimits = luaapi.Limits{Timeout: time.Minute}

// allPaths are the ways one built-in is run: the Program in process,
// `karta serve`'s handler, its Karmada export under karta's Karmada runner
// and its Argo CD export (when it has one) under karta's Argo CD runner.
type allPaths struct {
	p        *interpreter.Program
	h        http.Handler
	exported *karmada.Interpreter
	health   *argo.Script
}

// newAllPaths exports p to Karmada and Argo CD and loads the exports.
func newAllPaths(t testing.TB, p *interpreter.Program, h http.Handler) *allPaths {
	data, err := karmada.Export(p)
	require.NoError(t, err, "the Karmada export")
	custs, err := karmada.Load(data, p.Name()+".yaml")
	require.NoError(t, err)
	exported, err := karmada.NewInterpreter(custs, karmada.Options{Limits: pathLimits})
	require.NoError(t, err)
	ap := &allPaths{p: p, h: h, exported: exported}
	if ex, err := argo.ExportProgram(p); err == nil {
		ap.health, err = argo.CompileWith("health.lua", ex.Scripts["health.lua"], pathLimits)
		require.NoError(t, err)
	}
	return ap
}

// tally counts what ask found.
type tally struct{ asked, disagreements, cannotTell, withNulls, wordings int }

func (a *tally) add(b tally) {
	a.asked, a.disagreements, a.cannotTell = a.asked+b.asked, a.disagreements+b.disagreements, a.cannotTell+b.cannotTell
	a.withNulls, a.wordings = a.withNulls+b.withNulls, a.wordings+b.wordings
}

// worded checks an export's refusal against the in-process one
// (wordedByKind), counting those compared.
func (a *tally) worded(t *testing.T, where, path string, want, got answer) {
	t.Helper()
	ok, compared := wordedByKind(want, got)
	if compared {
		a.wordings++
	}
	if !ok {
		a.disagreements++
		t.Errorf("%s: in process %v, %s words it otherwise (the refused value's kind alone): %v", where, want, path, got)
	}
}

// withoutNulls is v as the exports see it: Karmada's and Argo CD's
// decoding of an object into Lua leaves a null member out and drops a null
// list element, later elements moving down (docs/jq.md, "Karmada's
// values"). changed reports whether there was a null to leave out.
func withoutNulls(v any) (out any, changed bool) {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			if e == nil {
				changed = true
				continue
			}
			var c bool
			m[k], c = withoutNulls(e)
			changed = changed || c
		}
		return m, changed
	case []any:
		a := make([]any, 0, len(x))
		for _, e := range x {
			if e == nil {
				changed = true
				continue
			}
			w, c := withoutNulls(e)
			a = append(a, w)
			changed = changed || c
		}
		return a, changed
	}
	return v, false
}

// withoutEmpty is v without empty lists and objects, at any depth.
// Karmada's fix-up of a returned object drops an empty table where the
// object it was given held a list or object of nulls only: what the export
// was handed was empty there, what it is compared with is not.
func withoutEmpty(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := map[string]any{}
		for k, e := range x {
			if w := withoutEmpty(e); !isEmpty(w) {
				m[k] = w
			}
		}
		return m
	case []any:
		a := make([]any, 0, len(x))
		for _, e := range x {
			if w := withoutEmpty(e); !isEmpty(w) {
				a = append(a, w)
			}
		}
		return a
	}
	return v
}

// isEmpty reports whether v is an empty list or object.
func isEmpty(v any) bool {
	switch x := v.(type) {
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// ask puts every question to every path for obj (named where in the
// errors) and reports each disagreement with the Program in process.
// oneFault says obj differs from a good state in one place at most: only
// then are the refusals' wordings compared (wordedByKind), for an object
// with several faults may meet the paths' evaluations in different
// orders (in process reads what a hook needs first and skips absent
// components, an export reads every rule's paths in its own order), and
// each path then rightly names the first fault it met.
func (ap *allPaths) ask(t *testing.T, where string, obj *unstructured.Unstructured, oneFault bool) tally {
	t.Helper()
	var n tally
	gvk := ap.p.GVK()
	enabled := func(op karmada.Operation) bool { return ap.exported.HookEnabled(gvk, op) }
	inProcess := karmada.ForProgram(ap.p)
	in := questions(t, inProcess, enabled, obj)
	// The exports answer for the object they are handed: in process must
	// give that answer for that object.
	seen, inSeen := obj, in
	v, nulls := withoutNulls(obj.Object)
	if nulls {
		n.withNulls++
		seen = &unstructured.Unstructured{Object: v.(map[string]any)}
		inSeen = questions(t, inProcess, enabled, seen)
	}
	byPath := []struct {
		name string
		want map[karmada.Operation]answer
		got  map[karmada.Operation]answer
	}{
		{"serve", in, questions(t, served{t: t, h: ap.h}, enabled, obj)},
		{"karmada export", inSeen, questions(t, ap.exported, enabled, obj)},
	}
	for _, path := range byPath {
		for op, want := range path.want {
			n.asked++
			got := path.got[op]
			if nulls && op == karmada.OpReviseReplica && path.name != "serve" && want.err == nil && got.err == nil {
				want.value, got.value = withoutEmpty(want.value), withoutEmpty(got.value)
			}
			if luaCannotTell(want, got) {
				n.cannotTell++
			}
			if !agree(want, got) {
				n.disagreements++
				t.Errorf("%s: %s: in process %v, %s %v", where, op, want, path.name, got)
			} else if path.name != "serve" && oneFault {
				n.worded(t, where+": "+string(op), path.name, want, got)
			}
		}
	}
	if ap.health != nil {
		n.asked++
		want := argoHealth(t, ap.p, seen)
		h, err := ap.health.Run(context.Background(), obj.DeepCopy().Object)
		got := answer{value: jsonForm(t, h), err: err}
		if err != nil {
			got.value = nil
		}
		if !agree(want, got) {
			n.disagreements++
			t.Errorf("%s: health: in process %v, argo export %v", where, want, got)
		} else if oneFault {
			n.worded(t, where+": health", "argo export", want, got)
		}
	}
	return n
}

// builtinRegistry is the built-ins under pathLimits, and serve's handler
// of them.
func builtinRegistry(t testing.TB) (*interpreter.Registry, http.Handler) {
	reg, err := builtin.Registry(interpreter.Options{Limits: pathLimits})
	require.NoError(t, err)
	return reg, webhook.New(webhook.Options{}, webhook.Kartas{Registry: reg})
}

func TestEveryPathGivesOneAnswer(t *testing.T) {
	reg, h := builtinRegistry(t)
	var mu sync.Mutex
	var total tally
	t.Cleanup(func() {
		t.Logf("%d questions asked of every path: %d disagreements, %d answers where jq refuses `{}` as an array and Lua cannot tell, %d refusals whose wording was compared", total.asked, total.disagreements, total.cannotTell, total.wordings)
		// The states' malformed variants make exports refuse values
		// (a string where a number is): the wording is checked on some.
		assert.Positive(t, total.wordings, "refusals whose wording was compared")
	})
	for _, p := range reg.List() {
		t.Run(p.Name(), func(t *testing.T) {
			t.Parallel()
			ap := newAllPaths(t, p, h)
			defer ap.exported.Close()
			var n tally
			defer func() {
				mu.Lock()
				defer mu.Unlock()
				total.add(n)
			}()
			gvk := p.GVK()
			objs := states(t, p.Name())
			names := make([]string, 0, len(objs))
			for n := range objs {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, name := range names {
				for _, v := range variants(objs[name]) {
					if v.obj.GroupVersionKind() != gvk {
						continue
					}
					n.add(ap.ask(t, name+" "+v.name, v.obj, true))
				}
			}
		})
	}
}

// variant is an example state, or one malformed as a careless controller,
// an old operator version or a hostile user might leave it.
type variant struct {
	name string
	obj  *unstructured.Unstructured
}

// variants are obj and its malformations: no status, an empty status,
// and for each list and scalar the Karta might read under spec and
// status (up to a few of each), the wrong type in its place — an object
// where a list is expected (`{}`, what a Go map encodes to), a string
// where a number is, a number where a string is.
func variants(obj *unstructured.Unstructured) []variant {
	out := []variant{{"as is", obj}}
	with := func(name string, f func(o map[string]any)) {
		c := obj.DeepCopy()
		f(c.Object)
		out = append(out, variant{name, c})
	}
	if _, ok := obj.Object["status"]; ok {
		with("without status", func(o map[string]any) { delete(o, "status") })
		with("status {}", func(o map[string]any) { o["status"] = map[string]any{} })
	}
	type site struct {
		path []string
		kind string
	}
	// The values of spec and status at most six objects deep, not
	// inside lists.
	var sites []site
	eachValue(obj.Object, []string{"spec", "status"}, 7, func(path []any, v any) {
		keys := make([]string, len(path))
		for i, step := range path {
			k, ok := step.(string)
			if !ok {
				return // an element of a list
			}
			keys[i] = k
		}
		switch v.(type) {
		case []any:
			sites = append(sites, site{keys, "list"})
		case string:
			sites = append(sites, site{keys, "string"})
		case int64, float64:
			sites = append(sites, site{keys, "number"})
		}
	})
	const perKind = 3
	count := map[string]int{}
	for _, s := range sites {
		if count[s.kind] >= perKind {
			continue
		}
		count[s.kind]++
		var wrong any
		switch s.kind {
		case "list":
			wrong = map[string]any{}
		case "string":
			wrong = int64(7)
		case "number":
			wrong = "3"
		}
		with(strings.Join(s.path, ".")+" as "+fmt.Sprintf("%T", wrong), func(o map[string]any) {
			_ = unstructured.SetNestedField(o, wrong, s.path...)
		})
	}
	return out
}
