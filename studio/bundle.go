package studio

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/internal/kartatest"
	"github.com/kartalua/karta/object"
)

// The files of a bundle, in its one folder.
const (
	bundleKarta     = "karta.yaml"
	bundlePods      = "pods.yaml"
	bundleRevisions = "revisions.yaml"
)

// unsafeName is what a bundle's folder name may not hold.
var unsafeName = regexp.MustCompile(`[^a-z0-9.-]+`)

func (h *Handler) serveBundle(w http.ResponseWriter, r *http.Request) {
	var req evaluateRequest
	if !h.decodeRequest(w, r, &req) {
		return
	}
	h.bounded(w, r, func(ctx context.Context) { h.writeBundle(ctx, w, &req) })
}

// writeBundle answers the zip of the folder bundle makes of req's answers.
func (h *Handler) writeBundle(ctx context.Context, w http.ResponseWriter, req *evaluateRequest) {
	a := h.evaluate(ctx, req)
	if len(a.Documents) == 0 {
		writeJSON(w, http.StatusUnprocessableEntity, apiError{Error: "nothing to test: the Karta needs to compile and answer at least one object"})
		return
	}
	name := "karta"
	if len(a.Kartas) > 0 {
		name = strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(a.Kartas[0].Name), "-"), "-.")
	}
	data, err := bundle(name, req, a)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, apiError{Error: err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name+".zip"))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data) // a failed write is the client gone
}

// bundle zips a folder NAME/ that `karta test NAME` passes on: the Karta,
// its override, each answered object in a file of its own, the pods, the
// revisions, and a karta_test.yaml whose cases expect what the studio
// answered — the status, the matched rules and the phase, the number of
// pod definitions, the gangs and the unmatched pods, or each failing
// hook's error — with the whole answers in golden files (golden/), as
// the examples' tests keep them.
func bundle(name string, req *evaluateRequest, a *evaluateResponse) ([]byte, error) {
	files := map[string][]byte{bundleKarta: []byte(req.Karta)}
	suite := kartatest.Suite{Karta: bundleKarta}
	if req.Script != "" {
		files[scriptName] = []byte(req.Script)
		suite.Scripts = []string{scriptName}
	}
	if strings.TrimSpace(req.Pods) != "" {
		files[bundlePods] = []byte(req.Pods)
	}
	if strings.TrimSpace(req.Revisions) != "" && len(a.RevisionProblems) == 0 {
		files[bundleRevisions] = []byte(req.Revisions)
	}
	docs, _ := decodeObjects(req.Objects, objectsSource)
	for i, d := range a.Documents {
		if _, none := d.Errors["karta"]; none {
			continue // no Karta of the text is for its kind: nothing to test
		}
		base := fmt.Sprintf("object-%d", i+1)
		obj, err := yaml.Marshal(docs[i].Object)
		if err != nil {
			return nil, err
		}
		files[base+".yaml"] = obj
		c, err := testCase(base, d, files)
		if err != nil {
			return nil, err
		}
		if c.Revise != nil {
			c.Revise.Type = req.RevisionType
		}
		suite.Tests = append(suite.Tests, c)
	}
	spec, err := yaml.Marshal(suite)
	if err != nil {
		return nil, err
	}
	files[kartatest.FileName] = append([]byte("# Written by karta studio from its answers: karta test "+name+"\n"), spec...)

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range slices.Sorted(maps.Keys(files)) {
		fw, err := zw.Create(path.Join(name, f))
		if err != nil {
			return nil, err
		}
		if _, err := fw.Write(files[f]); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// testCase states what the studio answered for one object (in the file
// base.yaml of files) as a case, its answers in golden files it adds to
// files: golden/base.status.json and the like, as karta test --update
// names them.
func testCase(base string, d documentResult, files map[string][]byte) (kartatest.Case, error) {
	c := kartatest.Case{Object: base + ".yaml"}
	golden := func(kind string, v any) string {
		name := "golden/" + base + "." + kind
		files[name] = kartatest.JSONText(v)
		return name
	}
	if msg, failed := d.Errors["status"]; failed {
		c.Status = &kartatest.StatusCheck{Error: msg}
	} else if d.Status != nil {
		c.Status = &kartatest.StatusCheck{Status: string(d.Status.Status), Phase: "-", Golden: golden("status.json", d.Status)}
		for _, m := range d.Status.Matched {
			c.Status.Matched = append(c.Status.Matched, string(m))
		}
		if d.Status.Phase != nil {
			c.Status.Phase = *d.Status.Phase
		}
	}
	if msg, failed := d.Errors["pods"]; failed {
		c.Pods = &kartatest.PodsCheck{Error: msg}
	} else if d.Pods != nil {
		n := len(d.Pods.Items)
		c.Pods = &kartatest.PodsCheck{Count: &n, Golden: golden("pods.json", d.Pods)}
	}
	if files[bundleRevisions] != nil {
		c.Revise = &kartatest.ReviseCheck{Revisions: bundleRevisions}
		if msg, failed := d.Errors["revise"]; failed {
			c.Revise.Error = msg
		} else if d.Revise != nil {
			c.Revise.Patch = golden("revise-patch.json", d.Revise.Patch)
			// The revised object as karta test renders it: from the
			// bundle's object file, whose layout is not the editor's.
			docs, err := object.Decode(files[c.Object], c.Object)
			if err != nil {
				return c, err
			}
			revised, err := revisedText(docs[0], d.Revise.Patch)
			if err != nil {
				return c, err
			}
			c.Revise.Object = "golden/" + base + ".revised.yaml"
			files[c.Revise.Object] = revised
		}
	}
	if files[bundlePods] == nil {
		return c, nil
	}
	if msg, failed := d.Errors["gangs"]; failed {
		c.Gang = &kartatest.GangCheck{Pods: bundlePods, Error: msg}
	} else if d.Gangs != nil {
		n := len(d.Gangs.Unmatched)
		c.Gang = &kartatest.GangCheck{Pods: bundlePods, Groups: []kartatest.GroupSummary{}, Unmatched: &n, Golden: golden("gang.json", d.Gangs)}
		for _, g := range d.Gangs.Groups {
			c.Gang.Groups = append(c.Gang.Groups, kartatest.GroupSummary{Name: g.Name, MinMember: g.MinMember, Pods: len(g.Pods)})
		}
	}
	return c, nil
}
