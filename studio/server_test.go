package studio

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/kartatest"
)

// call sends one request to a studio and decodes its JSON answer into out
// (when not nil); it returns the status code.
func call(t *testing.T, h http.Handler, method, path string, body any, out any) int {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		require.NoError(t, err)
		r = bytes.NewReader(data)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, r))
	if out != nil {
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), out), rec.Body.String())
	}
	return rec.Code
}

// builtinInputs are a built-in's texts as the picker loads them.
func builtinInputs(t *testing.T, h http.Handler, name, state string) evaluateRequest {
	t.Helper()
	var b builtinTexts
	require.Equal(t, http.StatusOK, call(t, h, "GET", "/api/builtins/"+name, nil, &b))
	require.Contains(t, b.States, state)
	return evaluateRequest{checkRequest: checkRequest{Karta: b.Karta, Script: b.Script}, Objects: b.States[state], Pods: b.Pods}
}

func TestPageAndAssets(t *testing.T) {
	h := New(Options{})
	for _, tc := range []struct{ path, contentType, contains string }{
		{"/", "text/html", `<script src="app.js"`},
		{"/app.js", "javascript", "api/evaluate"},
		{"/style.css", "text/css", "@media"},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		assert.Equal(t, http.StatusOK, rec.Code, tc.path)
		assert.Contains(t, rec.Header().Get("Content-Type"), tc.contentType, tc.path)
		assert.Contains(t, rec.Body.String(), tc.contains, tc.path)
		assert.Contains(t, rec.Header().Get("Content-Security-Policy"), "default-src 'self'", tc.path)
	}
	// Nothing beyond the embedded assets is served: no file of the disk.
	for _, path := range []string{"/../go.mod", "/assets/../server.go", "/server.go"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		assert.NotEqual(t, http.StatusOK, rec.Code, path)
	}
}

// Every built-in is offered with its example states, and its Karta as the
// editor shows it checks clean: the YAML the picker loads is the built-in.
func TestBuiltinsRoundTrip(t *testing.T) {
	h := New(Options{})
	var list []builtinSummary
	require.Equal(t, http.StatusOK, call(t, h, "GET", "/api/builtins", nil, &list))
	require.NotEmpty(t, list)
	names := map[string]builtinSummary{}
	for _, b := range list {
		names[b.Name] = b
	}
	require.Contains(t, names, "pytorchjob")
	assert.Equal(t, "kubeflow.org/v1, Kind=PyTorchJob", names["pytorchjob"].Kind)
	assert.Contains(t, names["pytorchjob"].States, "running.yaml")
	assert.NotContains(t, names["pytorchjob"].States, "pods.yaml", "pods are not a state")
	for _, b := range list {
		var got builtinTexts
		require.Equal(t, http.StatusOK, call(t, h, "GET", "/api/builtins/"+b.Name, nil, &got), b.Name)
		var c checkResponse
		require.Equal(t, http.StatusOK, call(t, h, "POST", "/api/check", checkRequest{Karta: got.Karta, Script: got.Script}, &c), b.Name)
		for _, p := range c.Problems {
			assert.NotEqual(t, "error", p.Severity, "%s: %+v", b.Name, p)
		}
		require.Len(t, c.Kartas, 1, b.Name)
		assert.Equal(t, b.Name, c.Kartas[0].Name)
		assert.Len(t, got.States, len(b.States), b.Name)
	}
	var e apiError
	assert.Equal(t, http.StatusNotFound, call(t, h, "GET", "/api/builtins/nosuch", nil, &e))
	assert.Equal(t, "no built-in Karta named nosuch", e.Error)
}

const brokenKarta = `apiVersion: run.ai/v1alpha1
kind: Karta
metadata:
  name: batchrun
spec:
  structureDefinition:
    rootComponent:
      name: batchrun
      kind: {group: example.com, version: v1, kind: BatchRun}
      statusDefinition:
        phaseDefinition:
          path: .status.phase[
`

// Each problem is where its field is: the line and the value's column.
func TestCheckPlacesProblems(t *testing.T) {
	h := New(Options{})
	cases := []struct {
		name, karta, script string
		line, column        int
		field, message      string
	}{
		{"broken jq", brokenKarta, "", 12, 17, "spec.structureDefinition.rootComponent.statusDefinition.phaseDefinition.path", "invalid jq"},
		{"bad YAML", "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata: {name: x\n", "", 3, 0, "", ""},
		{"unknown field", strings.Replace(brokenKarta, "path: .status.phase[", "pth: .status.phase", 1), "", 12, 0, "", "pth"},
		{"empty", "  \n", "", 0, 0, "", "no Karta"},
		{"script", strings.Replace(brokenKarta, ".status.phase[", ".status.phase", 1), "function InterpretStatus(obj\n", 0, 0, "script", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c checkResponse
			require.Equal(t, http.StatusOK, call(t, h, "POST", "/api/check", checkRequest{Karta: tc.karta, Script: tc.script}, &c))
			require.NotEmpty(t, c.Problems)
			p := c.Problems[0]
			assert.Equal(t, "error", p.Severity)
			assert.Equal(t, tc.line, p.Line, "%+v", p)
			if tc.column > 0 {
				assert.Equal(t, tc.column, p.Column, "%+v", p)
			} else if tc.line > 0 {
				assert.Positive(t, p.Column, "%+v", p)
			}
			if tc.field != "" {
				assert.Equal(t, tc.field, p.Field)
			}
			assert.Contains(t, p.Field+": "+p.Message, tc.message)
		})
	}
}

// The answers are the engine's for the same inputs: the PyTorchJob example
// is Running, its four pods form one gang, the tree holds them, and every
// scheduler gets its objects.
func TestEvaluateBuiltinExample(t *testing.T) {
	h := New(Options{})
	req := builtinInputs(t, h, "pytorchjob", "running.yaml")
	var a evaluateResponse
	require.Equal(t, http.StatusOK, call(t, h, "POST", "/api/evaluate", req, &a))
	assert.Empty(t, a.Problems)
	assert.Contains(t, a.Lua, "function InterpretStatus")
	require.Len(t, a.Documents, 1)
	d := a.Documents[0]
	assert.Empty(t, d.Errors)
	assert.Equal(t, "PyTorchJob nlp/mistral-7b-sft", d.Object)
	require.NotNil(t, d.Status)
	assert.Equal(t, "Running", string(d.Status.Status))
	require.NotNil(t, d.Gangs)
	require.Len(t, d.Gangs.Groups, 1)
	assert.Len(t, d.Gangs.Groups[0].Pods, 4)
	require.NotNil(t, d.Tree)
	assert.Equal(t, "mistral-7b-sft", d.Tree.Name)
	require.Len(t, d.Schedulers, 4)
	for _, s := range d.Schedulers {
		assert.Empty(t, s.Error, s.Target)
		assert.NotEmpty(t, s.Result.Objects, s.Target)
	}
}

// A multi-document object text is answered per document, a failing one
// beside the good ones; a Karta with errors answers nothing, and says why.
func TestEvaluateDocuments(t *testing.T) {
	h := New(Options{})
	req := builtinInputs(t, h, "pytorchjob", "running.yaml")
	failed := builtinInputs(t, h, "pytorchjob", "failed.yaml").Objects
	req.Objects += "\n---\n" + failed + "\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: other}\n"
	var a evaluateResponse
	require.Equal(t, http.StatusOK, call(t, h, "POST", "/api/evaluate", req, &a))
	require.Len(t, a.Documents, 3)
	assert.Equal(t, "Running", string(a.Documents[0].Status.Status))
	assert.Equal(t, "Failed", string(a.Documents[1].Status.Status))
	assert.Contains(t, a.Documents[2].Errors["status"], "Deployment")
	assert.Nil(t, a.Documents[2].Status)

	req.Pods = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: not-a-pod}\n"
	req.Objects = "a: [\n"
	a = evaluateResponse{}
	require.Equal(t, http.StatusOK, call(t, h, "POST", "/api/evaluate", req, &a))
	require.Len(t, a.PodProblems, 1)
	assert.Equal(t, 1, a.PodProblems[0].Line)
	assert.Contains(t, a.PodProblems[0].Message, "takes v1 Pods; this is apps/v1 Deployment not-a-pod")
	require.Len(t, a.ObjectProblems, 1)
	assert.Positive(t, a.ObjectProblems[0].Line)
	assert.Empty(t, a.Documents)

	req.Karta = brokenKarta
	a = evaluateResponse{}
	require.Equal(t, http.StatusOK, call(t, h, "POST", "/api/evaluate", req, &a))
	assert.Empty(t, a.Lua)
	assert.Empty(t, a.Documents)
	assert.NotEmpty(t, a.Problems)
}

// The bundle is a folder that karta test passes on: the studio's answers,
// stated as a karta_test.yaml and golden files, hold when the test runner
// checks them.
func TestBundlePassesKartaTest(t *testing.T) {
	h := New(Options{})
	req := builtinInputs(t, h, "pytorchjob", "running.yaml")
	req.Objects += "\n---\n" + builtinInputs(t, h, "pytorchjob", "failed.yaml").Objects
	req.Revisions = repoFile(t, "examples/pytorchjob/revisions.yaml")
	body, err := json.Marshal(req)
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/api/bundle", bytes.NewReader(body)))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, "application/zip", rec.Header().Get("Content-Type"))
	assert.Equal(t, `attachment; filename="pytorchjob.zip"`, rec.Header().Get("Content-Disposition"))

	zr, err := zip.NewReader(bytes.NewReader(rec.Body.Bytes()), int64(rec.Body.Len()))
	require.NoError(t, err)
	dir := t.TempDir()
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		r, err := f.Open()
		require.NoError(t, err)
		data, err := io.ReadAll(r)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(f.Name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, f.Name), data, 0o644))
	}
	want := []string{}
	for _, obj := range []string{"object-1", "object-2"} {
		for _, g := range []string{"gang.json", "pods.json", "revise-patch.json", "revised.yaml", "status.json"} {
			want = append(want, "pytorchjob/golden/"+obj+"."+g)
		}
	}
	want = append(want, "pytorchjob/karta.yaml", "pytorchjob/karta_test.yaml", "pytorchjob/object-1.yaml", "pytorchjob/object-2.yaml", "pytorchjob/pods.yaml", "pytorchjob/revisions.yaml")
	assert.Equal(t, want, names)
	spec, err := os.ReadFile(filepath.Join(dir, "pytorchjob", "karta_test.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(spec), "status: Failed")
	assert.Contains(t, string(spec), "unmatched: 2")

	rep, err := kartatest.Run(context.Background(), filepath.Join(dir, "pytorchjob"), kartatest.Options{})
	require.NoError(t, err)
	for _, r := range rep.Results {
		assert.True(t, r.OK(), "%s: %s", r.Name, r.Failure)
	}
	assert.Equal(t, 8, rep.Passed, "status, pods, gang and revise of two objects")
	assert.Zero(t, rep.Failed)
	golden, err := os.ReadFile(filepath.Join(dir, "pytorchjob", "golden", "object-1.revise-patch.json"))
	require.NoError(t, err)
	assert.JSONEq(t, repoFile(t, "examples/pytorchjob/golden/running.revise-patch.json"), string(golden), "karta revise's patch")

	// A golden that no longer holds fails: the files are what is checked.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pytorchjob", "golden", "object-2.status.json"), []byte("{}\n"), 0o644))
	rep, err = kartatest.Run(context.Background(), filepath.Join(dir, "pytorchjob"), kartatest.Options{})
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Failed)

	// Nothing to test is said so.
	var e apiError
	assert.Equal(t, http.StatusUnprocessableEntity, call(t, h, "POST", "/api/bundle", evaluateRequest{checkRequest: checkRequest{Karta: brokenKarta}}, &e))
	assert.Contains(t, e.Error, "nothing to test")
}
