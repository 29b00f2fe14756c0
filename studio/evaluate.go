package studio

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/object"
	"github.com/kartalua/karta/podgroups"
	"github.com/kartalua/karta/workload"
)

// The names of the other editors' texts in messages.
const (
	objectsSource = "objects.yaml"
	podsSource    = "pods.yaml"
	scriptName    = "override.lua"
)

// evaluateRequest is the body of POST /api/evaluate: the editors' texts.
type evaluateRequest struct {
	checkRequest
	// Objects are the workload objects: one or several documents, or a
	// List.
	Objects string `json:"objects"`
	// Pods are the workload's pods (a List or several documents), "" for
	// none: then the tree has no pods and the gangs place none.
	Pods string `json:"pods,omitempty"`
	// Revisions are `karta revise -r`'s list, "" for none; RevisionType
	// is --type, the type of the revisions that do not say ("" merge).
	Revisions    string `json:"revisions,omitempty"`
	RevisionType string `json:"revisionType,omitempty"`
}

// evaluateResponse is everything the page shows for a request.
type evaluateResponse struct {
	checkResponse
	// ObjectProblems and PodProblems are what is wrong with those texts.
	ObjectProblems []problem `json:"objectProblems"`
	PodProblems    []problem `json:"podProblems"`
	// RevisionProblems are what is wrong with the revisions' text.
	RevisionProblems []problem `json:"revisionProblems"`
	// Lua is the compiled program (karta compile), "" when the Karta has
	// errors.
	Lua string `json:"lua"`
	// CompileError is why a Karta without problems did not compile (its
	// override script, say).
	CompileError string `json:"compileError,omitempty"`
	// Documents are the answers for each object, in order.
	Documents []documentResult `json:"documents"`
}

// documentResult is every hook's answer for one object. A hook that
// failed has its error in Errors, under its name, and no answer.
type documentResult struct {
	// Document and Item say which object of the text it is (Item: of a
	// List), Line where it starts.
	Document int `json:"document"`
	Item     int `json:"item,omitempty"`
	Line     int `json:"line"`
	// Object names it: Kind namespace/name.
	Object string `json:"object"`
	// Karta is the name of the Karta that answered.
	Karta      string                    `json:"karta,omitempty"`
	Status     *interpreter.StatusResult `json:"status,omitempty"`
	Pods       *interpreter.PodSpecs     `json:"pods,omitempty"`
	Gangs      *interpreter.GangResult   `json:"gangs,omitempty"`
	Tree       *workload.Node            `json:"tree,omitempty"`
	Schedulers []schedulerResult         `json:"schedulers,omitempty"`
	// Revise is `karta revise` of the revisions, when there are some.
	Revise *reviseResult `json:"revise,omitempty"`
	// Errors maps a hook (status, pods, gangs, tree, revise) to its error.
	Errors map[string]string `json:"errors,omitempty"`
	// Warnings are the references' warnings, as the CLI prints them.
	Warnings []string `json:"warnings,omitempty"`
}

// schedulerResult is one gang scheduler's objects for the object
// (karta podgroups --for TARGET), or why there are none.
type schedulerResult struct {
	Target podgroups.Target  `json:"target"`
	Result *podgroups.Result `json:"result,omitempty"`
	Error  string            `json:"error,omitempty"`
}

func (h *Handler) serveEvaluate(w http.ResponseWriter, r *http.Request) {
	var req evaluateRequest
	if !h.decodeRequest(w, r, &req) {
		return
	}
	h.evaluating(w, r, func(ctx context.Context) any { return h.evaluate(ctx, &req) })
}

// evaluate answers a request as the CLI's commands answer the same inputs:
// status, pods, gang, describe and podgroups on each object, with the
// Karta of the text whose root kind is the object's (the only one, when
// the text holds one), compiled as karta compile prints it.
func (h *Handler) evaluate(ctx context.Context, req *evaluateRequest) *evaluateResponse {
	c := check(&req.checkRequest)
	resp := &evaluateResponse{checkResponse: c.response(), ObjectProblems: []problem{}, PodProblems: []problem{}, RevisionProblems: []problem{}, Documents: []documentResult{}}
	programs, err := h.compile(c, req.Script)
	if err != nil {
		resp.CompileError = err.Error()
	}
	if len(programs) == 1 {
		resp.Lua = programs[0].Source()
	}
	docs, problems := decodeObjects(req.Objects, objectsSource)
	resp.ObjectProblems = problems
	pods, podProblems := decodePods(req.Pods)
	resp.PodProblems = podProblems
	revs, revProblems := decodeRevisions(req.Revisions, req.RevisionType)
	resp.RevisionProblems = revProblems
	if len(programs) == 0 {
		return resp
	}
	for _, doc := range docs {
		resp.Documents = append(resp.Documents, answer(ctx, programs, doc, pods, revs))
	}
	return resp
}

// compile compiles each checked Karta with the override script; none when
// any document has an error (the CLI refuses such a file too).
func (h *Handler) compile(c *checked, script string) ([]*interpreter.Program, error) {
	if len(c.kartas) == 0 || hasErrors(c.problems) {
		return nil, nil
	}
	opts := interpreter.Options{Limits: h.opts.Limits, PoolSize: 1}
	if script != "" {
		opts.Scripts = []interpreter.Script{{Name: scriptName, Source: script}}
	}
	out := make([]*interpreter.Program, 0, len(c.kartas))
	for _, k := range c.kartas {
		p, err := interpreter.CompileChecked(k, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func hasErrors(ps []problem) bool {
	for _, p := range ps {
		if p.Severity == string(karta.SeverityError) && p.Check != problemCRD {
			return true
		}
	}
	return false
}

// answer runs every hook on one object, ReviseSpec with revs when there
// are some. Each hook's failure is kept under
// its name, so that one failing hook does not hide the others' answers.
func answer(ctx context.Context, programs []*interpreter.Program, doc *object.Document, pods []*unstructured.Unstructured, revs []interpreter.Revision) documentResult {
	obj := &unstructured.Unstructured{Object: doc.Object}
	res := documentResult{Document: doc.Index, Item: doc.Item, Line: doc.Line, Object: objectName(obj), Errors: map[string]string{}}
	p, err := programFor(programs, obj)
	if err != nil {
		res.Errors["karta"] = err.Error()
		return res
	}
	res.Karta = p.Name()
	seen := map[string]bool{}
	ctx = interpreter.WithResolver(ctx, interpreter.NewStaticResolver(), func(w interpreter.ReferenceWarning) {
		if s := w.String(); !seen[s] {
			seen[s] = true
			res.Warnings = append(res.Warnings, s)
		}
	})
	fail := func(hook string, err error) { res.Errors[hook] = err.Error() }
	if res.Status, err = p.InterpretStatus(ctx, obj); err != nil {
		fail("status", err)
	}
	if res.Pods, err = p.GetPodSpecs(ctx, obj); err != nil {
		fail("pods", err)
	}
	if res.Gangs, err = p.GetGangGroups(ctx, obj, pods); err != nil {
		fail("gangs", err)
	}
	if res.Tree, err = workload.Describe(ctx, p, obj, pods); err != nil {
		fail("tree", err)
	}
	if podgroups.HasGangInstructions(p.Karta()) {
		for _, t := range podgroups.Targets() {
			sr := schedulerResult{Target: t}
			if sr.Result, err = podgroups.ForProgram(ctx, p, obj, pods, t, podgroups.Options{}); err != nil {
				sr.Error = err.Error()
			}
			res.Schedulers = append(res.Schedulers, sr)
		}
	}
	if len(revs) > 0 {
		if res.Revise, err = revise(ctx, p, doc, revs); err != nil {
			fail("revise", err)
		}
	}
	return res
}

// programFor picks the Karta for an object as -k FILE does: the only one,
// or the one whose root kind is the object's.
func programFor(programs []*interpreter.Program, obj *unstructured.Unstructured) (*interpreter.Program, error) {
	if len(programs) == 1 {
		return programs[0], nil
	}
	gvk := obj.GroupVersionKind()
	for _, p := range programs {
		if k := p.Karta().Spec.StructureDefinition.RootComponent; k != nil && k.Kind != nil && k.Kind.GVK() == gvk {
			return p, nil
		}
	}
	return nil, fmt.Errorf("none of the %d Kartas is for %s", len(programs), gvk)
}

// decodeObjects decodes a text of objects as -f's are decoded, each item
// of a List on its own; what is wrong is a problem at its line.
func decodeObjects(text, source string) ([]*object.Document, []problem) {
	if strings.TrimSpace(text) == "" {
		return nil, []problem{}
	}
	docs, err := object.Decode([]byte(text), source)
	if err != nil {
		var de *object.DecodeError
		if errors.As(err, &de) {
			return nil, []problem{{Severity: string(karta.SeverityError), Document: de.Document, Line: de.Line, Column: newLocator([]byte(text)).indent(de.Line), Message: de.Message}}
		}
		return nil, []problem{{Severity: string(karta.SeverityError), Message: err.Error()}}
	}
	return object.Expand(docs), []problem{}
}

// decodePods decodes the pods' text as --pods is: v1 Pods only, each other
// object a problem at its line (matched as a pod, a Deployment would place
// a wrong pod in a gang). Without a text there are no pods (nil), as
// without --pods.
func decodePods(text string) ([]*unstructured.Unstructured, []problem) {
	docs, problems := decodeObjects(text, podsSource)
	if len(problems) > 0 || docs == nil {
		return nil, problems
	}
	pods := []*unstructured.Unstructured{}
	for _, d := range docs {
		u := &unstructured.Unstructured{Object: d.Object}
		if u.GetAPIVersion() != "v1" || u.GetKind() != "Pod" {
			problems = append(problems, problem{Severity: string(karta.SeverityError), Document: d.Index, Line: d.Line, Column: 1,
				Message: fmt.Sprintf("the pods' editor takes v1 Pods; this is %s", strings.TrimSpace(u.GetAPIVersion()+" "+objectName(u)))})
			continue
		}
		pods = append(pods, u)
	}
	return pods, problems
}

// objectName is "Kind namespace/name", as far as the object says.
func objectName(u *unstructured.Unstructured) string {
	name := u.GetName()
	if ns := u.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return strings.TrimSpace(u.GetKind() + " " + name)
}
