package studio

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/heapwatch"
	"github.com/kartalua/karta/interpreter"
)

// The limits the hostile tests evaluate under, as the webhook's hostile
// suite: a 2 s deadline per hook call and a 32 MiB memory guard.
var hostileLimits = interpreter.Limits{Timeout: 2 * time.Second, MaxMemory: 32 << 20}

// hostileKarta is a Karta whose running status is a jq expression.
func hostileKarta(expr string) string {
	return fmt.Sprintf(`apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: hostile}
spec:
  structureDefinition:
    rootComponent:
      name: batch
      kind: {group: hostile.example.com, version: v1, kind: Batch}
      statusDefinition:
        statusMappings:
          running:
          - byExpression: {expression: '%s', expectedResult: "true"}
`, strings.ReplaceAll(expr, "'", "''"))
}

const hostileObject = "apiVersion: hostile.example.com/v1\nkind: Batch\nmetadata: {name: b}\nstatus: {phase: Running}\n"

// A request's body is bounded, and what is not the API's JSON is refused.
func TestHostileRequests(t *testing.T) {
	h := New(Options{MaxRequestBytes: 1 << 20})
	huge := `{"karta": "` + strings.Repeat("a", 2<<20) + `"}`
	cases := []struct {
		name string
		body []byte
		code int
		msg  string
	}{
		{"over the size limit", []byte(huge), http.StatusRequestEntityTooLarge, "over 1048576 bytes"},
		{"not JSON", []byte("karta: x"), http.StatusBadRequest, "not the JSON"},
		{"wrong types", []byte(`{"karta": 3}`), http.StatusBadRequest, "not the JSON"},
	}
	for _, tc := range cases {
		for _, path := range []string{"/api/check", "/api/evaluate"} {
			t.Run(tc.name+path, func(t *testing.T) {
				var e apiError
				assert.Equal(t, tc.code, call(t, h, "POST", path, tc.body, &e))
				assert.Contains(t, e.Error, tc.msg)
			})
		}
	}
	// Evaluating takes a POST; a GET finds no page there.
	assert.Equal(t, http.StatusNotFound, call(t, h, "GET", "/api/evaluate", nil, nil))
}

// Hostile texts end in problems or in a hook's limit, promptly: jq that
// amplifies its input, objects that expand, a Karta or script too deep.
func TestHostileTexts(t *testing.T) {
	h := New(Options{Limits: hostileLimits})
	shared12 := strings.Repeat("[.,.,.,.] | ", 12)
	aliasBomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i, prev := 0, "a"; i < 9; i++ {
		name := string(rune('b' + i))
		aliasBomb += fmt.Sprintf("%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n", name, name, prev, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = name
	}
	cases := []struct {
		name string
		req  evaluateRequest
		// want is what the answer says: in a hook's error, or a problem.
		want func(t *testing.T, a *evaluateResponse)
	}{
		{"jq repeat", evaluateRequest{checkRequest: checkRequest{Karta: hostileKarta(`("x" * 100000000) | length > 0`)}, Objects: hostileObject}, hookLimit},
		{"jq shared tojson", evaluateRequest{checkRequest: checkRequest{Karta: hostileKarta(shared12 + `tojson | length > 0`)}, Objects: hostileObject}, hookLimit},
		{"jq sort", evaluateRequest{checkRequest: checkRequest{Karta: hostileKarta(shared12 + `sort | length > 0`)}, Objects: hostileObject}, hookLimit},
		{"lua loop", evaluateRequest{checkRequest: checkRequest{Karta: hostileKarta(`true`), Script: "function InterpretStatus(obj)\n  while true do end\nend\n"}, Objects: hostileObject}, hookLimit},
		{"deep jq", evaluateRequest{checkRequest: checkRequest{Karta: hostileKarta(strings.Repeat("[", 5000) + strings.Repeat("]", 5000))}, Objects: hostileObject}, func(t *testing.T, a *evaluateResponse) {
			require.NotEmpty(t, a.Problems)
			assert.Contains(t, a.Problems[0].Message, "nest")
			assert.Empty(t, a.Documents)
		}},
		{"object alias bomb", evaluateRequest{checkRequest: checkRequest{Karta: hostileKarta(`true`)}, Objects: aliasBomb}, func(t *testing.T, a *evaluateResponse) {
			require.Len(t, a.ObjectProblems, 1)
			assert.Empty(t, a.Documents)
		}},
		{"object too deep", evaluateRequest{checkRequest: checkRequest{Karta: hostileKarta(`true`)}, Objects: strings.Repeat("[", 100000)}, func(t *testing.T, a *evaluateResponse) {
			require.Len(t, a.ObjectProblems, 1)
			assert.Empty(t, a.Documents)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var a evaluateResponse
			var code int
			cost := heapwatch.Measure(func() { code = call(t, h, "POST", "/api/evaluate", tc.req, &a) })
			require.Equal(t, http.StatusOK, code)
			tc.want(t, &a)
			// status and the tree each run InterpretStatus: two calls
			// that may each run to the deadline.
			heapwatch.AssertPrompt(t, cost, 2*hostileLimits.Timeout, tc.name)
		})
	}
}

// hookLimit checks that the object's status ended on a limit, and that
// the hooks that do not need the status still answered.
func hookLimit(t *testing.T, a *evaluateResponse) {
	t.Helper()
	assert.Empty(t, a.Problems)
	require.Len(t, a.Documents, 1)
	d := a.Documents[0]
	assert.Regexp(t, `limit|deadline|exceeded`, d.Errors["status"])
	assert.Nil(t, d.Status)
	assert.NotNil(t, d.Pods, "GetPodSpecs does not read the status")
}

// Evaluations over the bound wait for a second, then are answered 429.
func TestConcurrencyBound(t *testing.T) {
	h := New(Options{Concurrency: 1})
	release, err := h.fair.Acquire(context.Background(), fairKey)
	require.NoError(t, err)
	defer release()
	var e apiError
	rec := evaluateRequest{checkRequest: checkRequest{Karta: hostileKarta("true")}, Objects: hostileObject}
	assert.Equal(t, http.StatusTooManyRequests, call(t, h, "POST", "/api/evaluate", rec, &e))
	assert.Contains(t, e.Error, "evaluations already running")
	// Checking a Karta evaluates nothing: it is not bounded. Checking it
	// against a CRD walks the schema: it is, and so are the other
	// endpoints that run the Karta.
	assert.Equal(t, http.StatusOK, call(t, h, "POST", "/api/check", rec.checkRequest, nil))
	withCRD := rec.checkRequest
	withCRD.CRD = "apiVersion: v1\nkind: ConfigMap\n"
	assert.Equal(t, http.StatusTooManyRequests, call(t, h, "POST", "/api/check", withCRD, nil))
	assert.Equal(t, http.StatusTooManyRequests, call(t, h, "POST", "/api/exports", rec, nil))
}

// The new panes' inputs are hostile too: a huge or deep CRD, Lua that
// loops in an export's run, patches that are deep, many or large. Each
// ends in a problem or a limit, promptly.
func TestHostilePanes(t *testing.T) {
	h := New(Options{Limits: hostileLimits})
	crd := repoFile(t, "examples/tutorial-trainjob/crd.yaml")
	trainjob := repoFile(t, "examples/kartas/trainjob.yaml")
	var wide strings.Builder
	for i := 0; wide.Len() <= maxCRDBytes; i++ {
		fmt.Fprintf(&wide, "              f%d: {type: string}\n", i)
	}
	nested := strings.Repeat("{type: object, properties: {a: ", 3000) + "{type: string}" + strings.Repeat("}}", 3000)
	crdCases := []struct {
		name, crd string
		want      func(t *testing.T, c *checkResponse)
	}{
		{"huge CRD", strings.Replace(crd, "              suspend: {type: boolean}\n", "              suspend: {type: boolean}\n"+wide.String(), 1), func(t *testing.T, c *checkResponse) {
			require.Len(t, c.CRDProblems, 1)
			assert.Contains(t, c.CRDProblems[0].Message, "over the studio's")
		}},
		{"deep CRD", strings.Replace(crd, "suspend: {type: boolean}", "suspend: "+nested, 1), func(t *testing.T, c *checkResponse) {
			// It decodes: .spec.suspend, an object now, is refuted.
			assert.Empty(t, c.CRDProblems)
			require.NotEmpty(t, c.Problems)
			assert.Equal(t, problemCRD, c.Problems[0].Check)
		}},
	}
	for _, tc := range crdCases {
		t.Run(tc.name, func(t *testing.T) {
			var c checkResponse
			var code int
			cost := heapwatch.Measure(func() { code = call(t, h, "POST", "/api/check", checkRequest{Karta: trainjob, CRD: tc.crd}, &c) })
			require.Equal(t, http.StatusOK, code)
			tc.want(t, &c)
			heapwatch.AssertPrompt(t, cost, 5*time.Second, tc.name)
		})
	}

	// Lua that allocates forever, carried into the Karmada export: its
	// run in karmada's interpreter ends on the same per-call limit as the
	// in-process one.
	req := evaluateRequest{checkRequest: checkRequest{Karta: repoFile(t, "examples/kartas/pytorchjob.yaml"),
		Script: "function GetComponents(obj)\n  local t = {}\n  while true do t[#t+1] = string.rep('x', 1000) end\nend\n"},
		Objects: repoFile(t, "examples/pytorchjob/running.yaml")}
	var e exportsResponse
	var code int
	cost := heapwatch.Measure(func() { code = call(t, h, "POST", "/api/exports", req, &e) })
	require.Equal(t, http.StatusOK, code)
	require.Len(t, e.Exports, 1)
	assert.Empty(t, e.Exports[0].KarmadaError, "the override is carried")
	require.Len(t, e.Documents, 1)
	found := false
	for _, c := range e.Documents[0].Karmada {
		if c.Operation == "InterpretComponent" {
			found = true
			assert.Regexp(t, `limit|deadline`, c.ExportedError)
			assert.Regexp(t, `limit|deadline`, c.InProcessError)
		}
	}
	assert.True(t, found, "InterpretComponent ran")
	heapwatch.AssertPrompt(t, cost, 2*hostileLimits.Timeout, "export run")

	req.Script = ""
	patchCases := []struct{ name, revisions, problem string }{
		{"deep patch", "- component: worker\n  instance: \"\"\n  patch: " + strings.Repeat("{a: ", 5000) + "1" + strings.Repeat("}", 5000) + "\n", "nesting"},
		{"many revisions", strings.Repeat("- component: worker\n  instance: \"\"\n  type: json\n  patch: [{op: add, path: /spec/containers/-, value: {name: x, image: y}}]\n", maxRevisions+1), "at most"},
		{"patch over the bound", "- component: worker\n  instance: \"\"\n  patch: {metadata: {annotations: {a: \"" + strings.Repeat("x", maxRevisionsBytes) + "\"}}}\n", "over the studio's"},
		{"large patch", "- component: worker\n  instance: \"\"\n  patch: {metadata: {annotations: {a: \"" + strings.Repeat("x", maxRevisionsBytes/2) + "\"}}}\n", ""},
	}
	for _, tc := range patchCases {
		t.Run(tc.name, func(t *testing.T) {
			req.Revisions = tc.revisions
			var a evaluateResponse
			var code int
			cost := heapwatch.Measure(func() { code = call(t, h, "POST", "/api/evaluate", req, &a) })
			require.Equal(t, http.StatusOK, code)
			require.Len(t, a.Documents, 1)
			if tc.problem != "" {
				require.Len(t, a.RevisionProblems, 1)
				assert.Contains(t, a.RevisionProblems[0].Message, tc.problem)
				assert.Nil(t, a.Documents[0].Revise)
			} else {
				require.NotNil(t, a.Documents[0].Revise, "%v %v", a.RevisionProblems, a.Documents[0].Errors)
				assert.Contains(t, a.Documents[0].Revise.Diff, "+            a: xxxx", "the annotation is added beside the template's own")
			}
			heapwatch.AssertPrompt(t, cost, 5*time.Second, tc.name)
		})
	}
}
