package studio

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/kartatest"
)

// repoFile reads a file of the repository, from the studio's folder.
func repoFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(path)))
	require.NoError(t, err)
	return string(data)
}

// A revision's patch is karta revise's: the RFC 6902 operations, the
// revised object in the input's layout, and the diff between the two.
func TestEvaluateRevise(t *testing.T) {
	h := New(Options{})
	var b builtinTexts
	require.Equal(t, http.StatusOK, call(t, h, "GET", "/api/builtins/pytorchjob", nil, &b))
	require.NotEmpty(t, b.Revisions, "the picker loads the example's revisions")
	req := builtinInputs(t, h, "pytorchjob", "running.yaml")
	req.Revisions = b.Revisions
	var a evaluateResponse
	require.Equal(t, http.StatusOK, call(t, h, "POST", "/api/evaluate", req, &a))
	assert.Empty(t, a.RevisionProblems)
	require.Len(t, a.Documents, 1)
	d := a.Documents[0]
	require.NotNil(t, d.Revise, "%v", d.Errors)
	// The golden of karta test examples/pytorchjob: the same patch.
	assert.JSONEq(t, repoFile(t, "examples/pytorchjob/golden/running.revise-patch.json"), string(kartatest.JSONText(d.Revise.Patch)))
	assert.Equal(t, req.Objects, d.Revise.Before, "the object's own text, comments and all")
	assert.Contains(t, d.Revise.Diff, "+          schedulerName: kai-scheduler")
	for _, line := range strings.Split(d.Revise.Diff, "\n") {
		assert.False(t, strings.HasPrefix(line, "-"), "the revisions only add: %s", line)
	}
	assert.Contains(t, d.Revise.After, "kai.scheduler/queue: nlp")
	// The other hooks read the object as given.
	assert.Equal(t, "Running", string(d.Status.Status))

	cases := []struct {
		name, revisions, typ string
		line                 int
		message              string
	}{
		{"not YAML", "- component: [\n", "", 2, "YAML"},
		{"not a list", "component: master\n", "", 0, "must be a list"},
		{"no component", "- component: worker\n  patch: {}\n- instance: \"\"\n  patch: {}\n", "", 3, "revisions[1].component"},
		{"unknown field", "- component: worker\n  instance: \"\"\n  pach: {}\n", "", 1, `unknown field "pach"`},
		{"unknown type", "- component: worker\n  patch: {}\n", "yaml", 0, "want merge, strategic or json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req.Revisions, req.RevisionType = tc.revisions, tc.typ
			var a evaluateResponse
			require.Equal(t, http.StatusOK, call(t, h, "POST", "/api/evaluate", req, &a))
			require.Len(t, a.RevisionProblems, 1)
			assert.Contains(t, a.RevisionProblems[0].Message, tc.message)
			if tc.line > 0 {
				assert.Equal(t, tc.line, a.RevisionProblems[0].Line, "%+v", a.RevisionProblems[0])
			}
			require.Len(t, a.Documents, 1)
			assert.Nil(t, a.Documents[0].Revise, "no revisions run while their text is wrong")
		})
	}

	// A revision ReviseSpec refuses is the revise pane's error.
	req.Revisions, req.RevisionType = "- component: nosuch\n  instance: \"\"\n  patch: {spec: {schedulerName: x}}\n", ""
	a = evaluateResponse{}
	require.Equal(t, http.StatusOK, call(t, h, "POST", "/api/evaluate", req, &a))
	require.Len(t, a.Documents, 1)
	assert.Contains(t, a.Documents[0].Errors["revise"], "nosuch")
	assert.NotNil(t, a.Documents[0].Status)
}

// The exports are the CLI's, and their answers on the object are those of
// karmada's and the Argo CD runner, beside the in-process ones.
func TestExports(t *testing.T) {
	h := New(Options{})
	req := builtinInputs(t, h, "pytorchjob", "running.yaml")
	var a exportsResponse
	require.Equal(t, http.StatusOK, call(t, h, "POST", "/api/exports", req, &a))
	require.Len(t, a.Exports, 1)
	ex := a.Exports[0]
	assert.Empty(t, ex.KarmadaError)
	assert.Contains(t, ex.Karmada, "kind: ResourceInterpreterCustomization")
	assert.Empty(t, ex.ArgoError)
	assert.Contains(t, ex.Argo, "health.lua")
	require.Len(t, a.Documents, 1)
	d := a.Documents[0]
	assert.Equal(t, "pytorchjob", d.Karta)
	ops := map[string]comparison{}
	for _, c := range d.Karmada {
		ops[c.Operation] = c
		assert.True(t, c.Agree, "%+v", c)
		assert.Empty(t, c.ExportedError, c.Operation)
	}
	assert.Contains(t, ops, "InterpretComponent")
	assert.Contains(t, ops, "InterpretHealth")
	assert.Equal(t, true, ops["InterpretHealth"].Exported)
	require.NotNil(t, d.Argo)
	assert.True(t, d.Argo.Agree, "%+v", d.Argo)
	assert.Equal(t, map[string]any{"status": "Progressing", "message": d.Argo.Exported.(map[string]any)["message"]}, d.Argo.Exported)

	// An override of InterpretStatus cannot go to Argo CD: the export
	// refuses, naming it, and the Karmada one still answers.
	req.Script = "function InterpretStatus(obj)\n  return {status = \"Running\"}\nend\n"
	a = exportsResponse{}
	require.Equal(t, http.StatusOK, call(t, h, "POST", "/api/exports", req, &a))
	require.Len(t, a.Exports, 1)
	assert.Contains(t, a.Exports[0].ArgoError, "InterpretStatus")
	require.Len(t, a.Documents, 1)
	assert.True(t, a.Documents[0].Argo.NotExported)
	assert.False(t, a.Documents[0].Argo.Agree)
	assert.NotNil(t, a.Documents[0].Argo.InProcess)

	// A Karta with errors exports nothing.
	a = exportsResponse{}
	require.Equal(t, http.StatusOK, call(t, h, "POST", "/api/exports", evaluateRequest{checkRequest: checkRequest{Karta: brokenKarta}, Objects: req.Objects}, &a))
	assert.Empty(t, a.Exports)
	assert.Empty(t, a.Documents)
}

// A pasted CRD checks the Karta as --crd does: a path its schema refutes
// is a problem at the path's line, marked as the CRD's; the hooks still
// run. What is wrong with the CRD's text is its own problem.
func TestCheckAgainstCRD(t *testing.T) {
	h := New(Options{})
	crd := repoFile(t, "examples/tutorial-trainjob/crd.yaml")
	karta := repoFile(t, "examples/kartas/trainjob.yaml")
	var c checkResponse
	require.Equal(t, http.StatusOK, call(t, h, "POST", "/api/check", checkRequest{Karta: karta, CRD: crd}, &c))
	assert.Empty(t, c.Problems)
	assert.Empty(t, c.CRDProblems)

	typo := strings.Replace(karta, "suspendActions: [{path: .spec.suspend,", "suspendActions: [{path: .spec.suspnd,", 1)
	require.NotEqual(t, karta, typo)
	line := 1 + strings.Count(typo[:strings.Index(typo, ".spec.suspnd")], "\n")
	var a evaluateResponse
	require.Equal(t, http.StatusOK, call(t, h, "POST", "/api/evaluate", evaluateRequest{checkRequest: checkRequest{Karta: typo, CRD: crd}, Objects: repoFile(t, "examples/tutorial-trainjob/running.yaml")}, &a))
	require.NotEmpty(t, a.Problems)
	p := a.Problems[0]
	assert.Equal(t, problem{Severity: "error", Document: 1, Line: line, Column: p.Column, Field: "spec.structureDefinition.rootComponent.suspendDefinition.suspendActions[0].path",
		Message: p.Message, Check: problemCRD}, p)
	assert.Contains(t, p.Message, `did you mean "suspend"`)
	assert.Positive(t, p.Column)
	require.Len(t, a.Documents, 1, "schema problems do not stop the hooks")
	assert.NotNil(t, a.Documents[0].Status)

	for name, tc := range map[string]struct {
		crd, message string
		line         int
	}{
		"not YAML":     {"apiVersion: v1\nkind: [\n", "", 3},
		"not a CRD":    {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "CustomResourceDefinition", 0},
		"another kind": {strings.ReplaceAll(crd, "TrainJob", "TrainJab"), "", 0},
	} {
		t.Run(name, func(t *testing.T) {
			var c checkResponse
			require.Equal(t, http.StatusOK, call(t, h, "POST", "/api/check", checkRequest{Karta: karta, CRD: tc.crd}, &c))
			if name == "another kind" {
				require.Len(t, c.Problems, 1)
				assert.Contains(t, c.Problems[0].Message, "no served CRD for example.com/v1 TrainJob in the pasted CRDs")
				assert.Equal(t, problemCRD, c.Problems[0].Check)
				return
			}
			require.Len(t, c.CRDProblems, 1)
			assert.Contains(t, c.CRDProblems[0].Message, tc.message)
			if tc.line > 0 {
				assert.Equal(t, tc.line, c.CRDProblems[0].Line, "%+v", c.CRDProblems[0])
			}
		})
	}
}
