package kartatest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/internal/textdiff"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
)

// checker runs the checks of one case.
type checker struct {
	r    *runner
	i    int // the case's index in the test file
	ctx  context.Context
	p    *interpreter.Program
	obj  *unstructured.Unstructured
	name string
}

// verdict accumulates one check's findings.
type verdict struct {
	name     string
	failures []string
	diff     string
}

func (v *verdict) failf(format string, args ...any) {
	v.failures = append(v.failures, fmt.Sprintf(format, args...))
}

func (v *verdict) result() Result {
	return Result{Name: v.name, Failure: strings.Join(v.failures, "; "), Diff: v.diff}
}

// hookErr handles a hook's error against the check's expected error:
// done is true when there is nothing more to compare.
func (ck *checker) hookErr(v *verdict, err error, want string) (done bool) {
	switch {
	case want != "" && err == nil:
		v.failf("expected an error containing %q, got none", want)
		return true
	case want != "" && !strings.Contains(err.Error(), want):
		v.failf("expected an error containing %q, got: %v", want, err)
		return true
	case want != "":
		return true
	case err != nil:
		v.failf("error: %v", err)
		return true
	}
	return false
}

// same compares an inline expectation with the actual value, or updates
// it: field is the key under the check in the test file.
func (ck *checker) same(v *verdict, check, field string, want, got any) {
	if reflect.DeepEqual(want, got) {
		return
	}
	if ck.r.opts.Update {
		ck.r.updates.set(ck.i, check, field, got)
		return
	}
	v.failf("%s: expected %s, got %s", field, compact(want), compact(got))
}

// expectsNothing handles a check that names its inputs but states no
// expectation (gang: {pods: pods.yaml}): it would pass whatever the hook
// gave. Without --update it fails, saying what to add; with --update it
// writes the placeholders of fill into the test file (and the case) and
// returns true, so that the comparison that follows writes the values.
func (ck *checker) expectsNothing(v *verdict, check, want string, fill ...placeholder) bool {
	if !ck.r.opts.Update {
		v.failf("%s states nothing to check: add %s (or run karta test --update)", check, want)
		return false
	}
	for _, p := range fill {
		ck.r.updates.set(ck.i, check, p.field, p.value)
	}
	return true
}

// placeholder is a value --update writes under a check before comparing.
type placeholder struct {
	field string
	value any
}

// golden compares the JSON (or text) of a result with a golden file, or
// writes it.
func (ck *checker) golden(v *verdict, file string, got []byte) {
	path := filepath.Join(ck.r.dir, file)
	if ck.r.opts.Update {
		if want, err := os.ReadFile(path); err == nil && bytes.Equal(want, got) {
			return
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			v.failf("%v", err)
			return
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			v.failf("%v", err)
			return
		}
		ck.r.written[path] = true
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		v.failf("golden %s: %v (run karta test --update to write it, then review it)", file, err)
		return
	}
	if !bytes.Equal(want, got) {
		v.failf("differs from %s", file)
		v.diff = textdiff.Unified(string(want), string(got))
	}
}

func (ck *checker) status(c *StatusCheck) Result {
	v := &verdict{name: ck.name + ": status"}
	if c.Status == "" && c.Matched == nil && c.Phase == "" && c.Golden == "" && c.Error == "" {
		c.Status, c.Matched = "?", []string{}
		if !ck.expectsNothing(v, "status", "status, matched, phase, golden or error", placeholder{"status", c.Status}, placeholder{"matched", c.Matched}) {
			return v.result()
		}
	}
	res, err := ck.p.InterpretStatus(ck.ctx, ck.obj)
	if ck.hookErr(v, err, c.Error) {
		return v.result()
	}
	if c.Status != "" {
		ck.same(v, "status", "status", c.Status, string(res.Status))
	}
	if c.Matched != nil {
		got := make([]string, len(res.Matched))
		for i, m := range res.Matched {
			got[i] = string(m)
		}
		ck.same(v, "status", "matched", c.Matched, got)
	}
	if c.Phase != "" {
		got := "-"
		if res.Phase != nil {
			got = *res.Phase
		}
		ck.same(v, "status", "phase", c.Phase, got)
	}
	if c.Golden != "" {
		ck.golden(v, c.Golden, jsonText(res))
	}
	return v.result()
}

func (ck *checker) pods(c *PodsCheck) Result {
	v := &verdict{name: ck.name + ": pods"}
	if c.Count == nil && c.Items == nil && c.Golden == "" && c.Error == "" {
		c.Count = new(int)
		if !ck.expectsNothing(v, "pods", "count, items, golden or error", placeholder{"count", 0}) {
			return v.result()
		}
	}
	res, err := ck.p.GetPodSpecs(ck.ctx, ck.obj)
	if ck.hookErr(v, err, c.Error) {
		return v.result()
	}
	if c.Count != nil {
		ck.same(v, "pods", "count", *c.Count, len(res.Items))
	}
	if c.Items != nil {
		got := make([]PodSummary, len(res.Items))
		for i, it := range res.Items {
			got[i] = summarise(it)
		}
		ck.same(v, "pods", "items", c.Items, got)
	}
	if c.Golden != "" {
		ck.golden(v, c.Golden, jsonText(res))
	}
	return v.result()
}

func (ck *checker) gang(c *GangCheck) Result {
	v := &verdict{name: ck.name + ": gang"}
	if c.Groups == nil && c.Unmatched == nil && c.Golden == "" && c.Error == "" {
		c.Groups, c.Unmatched = []GroupSummary{}, new(int)
		if !ck.expectsNothing(v, "gang", "groups, unmatched, golden or error", placeholder{"groups", c.Groups}, placeholder{"unmatched", 0}) {
			return v.result()
		}
	}
	pods, err := ck.r.readPods(c.Pods)
	if err != nil {
		v.failf("%v", err)
		return v.result()
	}
	res, err := ck.p.GetGangGroups(ck.ctx, ck.obj, pods)
	if ck.hookErr(v, err, c.Error) {
		return v.result()
	}
	if c.Groups != nil {
		got := make([]GroupSummary, len(res.Groups))
		for i, g := range res.Groups {
			got[i] = GroupSummary{Name: g.Name, MinMember: g.MinMember, Pods: len(g.Pods)}
		}
		ck.same(v, "gang", "groups", c.Groups, got)
	}
	if c.Unmatched != nil {
		ck.same(v, "gang", "unmatched", *c.Unmatched, len(res.Unmatched))
	}
	if c.Golden != "" {
		ck.golden(v, c.Golden, jsonText(res))
	}
	return v.result()
}

func (ck *checker) revise(c *ReviseCheck, objectFile string) Result {
	v := &verdict{name: ck.name + ": revise"}
	typ, err := interpreter.ParsePatchType(c.Type)
	if c.Type == "" {
		typ, err = interpreter.PatchMerge, nil
	}
	if err != nil {
		v.failf("type %q: want merge, strategic or json", c.Type)
		return v.result()
	}
	if c.Patch == "" && c.Object == "" && c.Error == "" {
		// The expectations of a revision are golden files: --update names
		// one beside the others.
		c.Patch = "golden/" + path.Base(ck.name) + ".patch.json"
		if !ck.expectsNothing(v, "revise", "patch, object (golden files) or error", placeholder{"patch", c.Patch}) {
			return v.result()
		}
	}
	revs, err := ck.r.readRevisions(c.Revisions, typ)
	if err != nil {
		v.failf("%v", err)
		return v.result()
	}
	res, err := ck.p.ReviseSpec(ck.ctx, ck.obj, revs)
	if ck.hookErr(v, err, c.Error) {
		return v.result()
	}
	patch := res.Patch
	if patch == nil {
		patch = []interpreter.PatchOp{}
	}
	if c.Patch != "" {
		ck.golden(v, c.Patch, jsonText(patch))
	}
	if c.Object != "" {
		// The revised object as `karta revise` prints it: the input's
		// layout, with the patch's writes.
		doc, err := ck.r.readObject(objectFile)
		if err != nil {
			v.failf("%v", err)
			return v.result()
		}
		ops := make([]object.Op, len(patch))
		for i, op := range patch {
			ops[i] = object.Op{Op: op.Op, Path: op.Path, Value: op.Value}
		}
		if err := doc.ApplyToTree(ops); err != nil {
			v.failf("the patch does not apply to the object (a karta bug): %v", err)
			return v.result()
		}
		text, err := doc.YAML()
		if err != nil {
			v.failf("%v", err)
			return v.result()
		}
		ck.golden(v, c.Object, text)
	}
	return v.result()
}

// summarise is a pod definition in short: its images are its containers',
// in order, from whichever style the definition has.
func summarise(it interpreter.PodSpecItem) PodSummary {
	s := PodSummary{Component: it.Component, Instance: it.Instance}
	if it.Scale != nil {
		s.Replicas = it.Scale.Replicas
	}
	var containers []any
	switch {
	case it.PodTemplateSpec != nil:
		spec, _ := it.PodTemplateSpec["spec"].(map[string]any)
		containers, _ = spec["containers"].([]any)
	case it.PodSpec != nil:
		containers, _ = it.PodSpec["containers"].([]any)
	case it.Fragmented != nil:
		f := it.Fragmented
		containers = f.Containers
		if f.Container != nil {
			containers = append(containers, f.Container)
		}
		if f.Image != nil {
			s.Images = append(s.Images, *f.Image)
		}
	}
	for _, c := range containers {
		if m, ok := c.(map[string]any); ok {
			if img, ok := m["image"].(string); ok {
				s.Images = append(s.Images, img)
			}
		}
	}
	return s
}

// JSONText is a result as `karta … -o json` prints it, and as a golden
// file holds it (karta studio writes the goldens of its downloads so).
func JSONText(v any) []byte { return jsonText(v) }

// jsonText is a result as `karta … -o json` prints it: indented by two,
// HTML characters as they are, a final newline.
func jsonText(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// The hooks' results are JSON values.
		return []byte(err.Error() + "\n")
	}
	return buf.Bytes()
}

// compact is a value on one line: a string as it is, anything else as
// JSON.
func compact(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func (r *runner) readPods(file string) ([]*unstructured.Unstructured, error) {
	path := filepath.Join(r.dir, file)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	docs, err := object.Decode(data, path)
	if err != nil {
		return nil, err
	}
	items := object.Items(docs)
	pods := make([]*unstructured.Unstructured, len(items))
	for i, it := range items {
		pods[i] = &unstructured.Unstructured{Object: it}
	}
	return pods, nil
}

func (r *runner) readRevisions(file string, typ interpreter.PatchType) ([]interpreter.Revision, error) {
	path := filepath.Join(r.dir, file)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	v, err := object.DecodeValue(data, path)
	if err != nil {
		return nil, err
	}
	revs, err := interpreter.DecodeRevisionsWithType(v, typ)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return revs, nil
}
