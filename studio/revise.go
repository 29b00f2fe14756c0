package studio

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/internal/textdiff"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/object"
)

// revisionsSource names the revisions' editor text in messages.
const revisionsSource = "revisions.yaml"

// maxRevisionsBytes bounds the revisions' text: a revision's patch is a
// few fields of a pod template, and each byte of it is decoded, merged,
// written into the object's text, diffed and sent back several times.
const maxRevisionsBytes = 1 << 20

// maxRevisions bounds the revisions of a request: ReviseSpec's work grows
// with them and is not charged to the per-call limits, and a workload has
// far fewer pod-bearing instances to revise.
const maxRevisions = 1000

// maxDiffLines bounds the texts the diff compares, each side: a larger
// revised object is shown whole, without a diff.
const maxDiffLines = 20000

// reviseResult is what `karta revise` answers for one object: the RFC
// 6902 patch (-o patch), the revised object in the input's layout (the
// default output), and the diff from the object to it.
type reviseResult struct {
	Patch []interpreter.PatchOp `json:"patch"`
	// Before and After are the object's text and the revised one, as
	// `karta revise` prints it: only the fields the patch writes change.
	Before string `json:"before"`
	After  string `json:"after"`
	// Diff is a unified diff from Before to After, "" when the patch is
	// empty.
	Diff string `json:"diff"`
	// Warnings are ReviseSpec's, as the CLI prints them on standard error.
	Warnings []string `json:"warnings,omitempty"`
}

// revisionPath finds the field a decoding error names:
// "revisions[2].patch: ...".
var revisionPath = regexp.MustCompile(`^revisions\[\d+\](\.[A-Za-z]+)*`)

// decodeRevisions reads the revisions' editor as `karta revise -r` reads
// its file, with typ the type of the revisions that do not say (--type);
// what is wrong is a problem at its line. No text is no revisions (nil).
func decodeRevisions(text string, typ string) ([]interpreter.Revision, []problem) {
	if strings.TrimSpace(text) == "" {
		return nil, []problem{}
	}
	if len(text) > maxRevisionsBytes {
		return nil, []problem{{Severity: string(karta.SeverityError), Message: fmt.Sprintf("the revisions' text is %d bytes, over the studio's %d", len(text), maxRevisionsBytes)}}
	}
	t, err := interpreter.ParsePatchType(typ)
	if err != nil {
		return nil, []problem{{Severity: string(karta.SeverityError), Field: "type", Message: fmt.Sprintf("type %q: want merge, strategic or json", typ)}}
	}
	data := []byte(text)
	v, err := object.DecodeValue(data, revisionsSource)
	if err != nil {
		var de *object.DecodeError
		if errors.As(err, &de) {
			return nil, []problem{{Severity: string(karta.SeverityError), Document: de.Document, Line: de.Line, Column: newLocator(data).indent(de.Line), Message: de.Message}}
		}
		return nil, []problem{{Severity: string(karta.SeverityError), Message: err.Error()}}
	}
	if list, ok := v.([]any); ok && len(list) > maxRevisions {
		return nil, []problem{{Severity: string(karta.SeverityError), Message: fmt.Sprintf("%d revisions: the studio takes at most %d", len(list), maxRevisions)}}
	}
	revs, err := interpreter.DecodeRevisionsWithType(v, t)
	if err != nil {
		p := problem{Severity: string(karta.SeverityError), Message: err.Error()}
		if m := revisionPath.FindString(err.Error()); m != "" {
			// The field the message names, in the list: "[2].patch".
			p.Field = m
			p.Line, p.Column = newLocator(data).field(1, strings.TrimPrefix(m, "revisions"))
		}
		return nil, []problem{p}
	}
	return revs, []problem{}
}

// revise runs ReviseSpec on the object as `karta revise` does, and renders
// the revised object the CLI's way: the patch applied to the document's
// tree, so that the rest keeps its layout. It writes to doc's tree: run
// it after the other hooks' renderings of doc.
func revise(ctx context.Context, p *interpreter.Program, doc *object.Document, revs []interpreter.Revision) (*reviseResult, error) {
	res, err := p.ReviseSpec(ctx, &unstructured.Unstructured{Object: doc.Object}, revs)
	if err != nil {
		return nil, err
	}
	before, err := doc.YAML()
	if err != nil {
		return nil, err
	}
	out := &reviseResult{Patch: res.Patch, Before: string(before), After: string(before)}
	if out.Patch == nil {
		out.Patch = []interpreter.PatchOp{}
	}
	for _, w := range res.Warnings {
		out.Warnings = append(out.Warnings, w.Where()+": warning: "+w.Message())
	}
	if len(res.Patch) == 0 {
		return out, nil
	}
	// The writes go to the document's tree only: the other hooks read its
	// Object, which ApplyToTree leaves as it was.
	after, err := revisedText(doc, res.Patch)
	if err != nil {
		return nil, fmt.Errorf("karta %q: ReviseSpec: %w", p.Name(), err)
	}
	out.After = string(after)
	if strings.Count(out.Before, "\n") > maxDiffLines || strings.Count(out.After, "\n") > maxDiffLines {
		out.Diff = fmt.Sprintf("(not diffed: over %d lines; the revised object is shown whole)\n", maxDiffLines)
		return out, nil
	}
	out.Diff = textdiff.Unified(out.Before, out.After)
	return out, nil
}

// revisedText is the document with the patch applied to its tree, as
// `karta revise` prints it (and karta test compares its object golden).
func revisedText(doc *object.Document, patch []interpreter.PatchOp) ([]byte, error) {
	ops := make([]object.Op, len(patch))
	for i, op := range patch {
		ops[i] = object.Op{Op: op.Op, Path: op.Path, Value: op.Value}
	}
	if err := doc.ApplyToTree(ops); err != nil {
		return nil, fmt.Errorf("the patch does not apply to the object (a karta bug): %w", err)
	}
	return doc.YAML()
}
