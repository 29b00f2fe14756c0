package studio

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kartalua/karta/internal/yamlerr"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// kartaSource names the Karta editor's text in messages, as a file name
// names it in the CLI's.
const kartaSource = "karta.yaml"

// problem is one finding in an editor's text, where it is.
type problem struct {
	// Severity is "error" or "warning".
	Severity string `json:"severity"`
	// Document is the 1-based document of the text, 0 when the problem is
	// about the text as a whole.
	Document int `json:"document,omitempty"`
	// Line and Column are 1-based, 0 when unknown: the field's key, or the
	// value's first character when the value is on the key's line.
	Line   int `json:"line"`
	Column int `json:"column"`
	// Field is the field path, as validation names it; "" when none.
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
	// Check is "crd" for a problem the pasted CRD's schema finds (as
	// `karta validate --crd`): shown with the others, it does not stop
	// the hooks, as `--crd` only warns on the commands that run them.
	Check string `json:"check,omitempty"`
}

// checkRequest is the body of POST /api/check.
type checkRequest struct {
	// Karta is the Karta's YAML or JSON, one or several documents.
	Karta string `json:"karta"`
	// Script is a Lua override chunk, as --script gives one; "" for none.
	Script string `json:"script,omitempty"`
	// CRD is CustomResourceDefinitions to check the Karta against, as
	// --crd's; "" for none.
	CRD string `json:"crd,omitempty"`
}

// checkResponse says what is wrong with a Karta, and what it is for.
type checkResponse struct {
	Problems []problem `json:"problems"`
	// Kartas names each document's Karta and its root kind.
	Kartas []kartaInfo `json:"kartas"`
	// CRDProblems are what is wrong with the CRD's text.
	CRDProblems []problem `json:"crdProblems"`
}

// kartaInfo names one Karta of the text.
type kartaInfo struct {
	Name string `json:"name"`
	// Kind is the root component's group/version, Kind.
	Kind string `json:"kind"`
}

func (h *Handler) serveCheck(w http.ResponseWriter, r *http.Request) {
	var req checkRequest
	if !h.decodeRequest(w, r, &req) {
		return
	}
	if strings.TrimSpace(req.CRD) == "" {
		// Loading and analysing a Karta runs none of it: not bounded.
		writeJSON(w, http.StatusOK, check(&req).response())
		return
	}
	// A CRD's schema checks walk the schema: bounded as evaluations are.
	h.evaluating(w, r, func(context.Context) any { return check(&req).response() })
}

// checked is a Karta text loaded and analysed: every problem, and the
// checked form of each document when none of its problems is an error.
type checked struct {
	problems    []problem
	crdProblems []problem
	kartas      []*karta.Checked
}

func (c *checked) response() checkResponse {
	return checkResponse{Problems: c.problems, Kartas: c.infos(), CRDProblems: c.crdProblems}
}

func (c *checked) infos() []kartaInfo {
	out := make([]kartaInfo, 0, len(c.kartas))
	for _, k := range c.kartas {
		info := kartaInfo{Name: k.Karta.Name}
		if root := k.Karta.Spec.StructureDefinition.RootComponent; root != nil && root.Kind != nil {
			info.Kind = root.Kind.GVK().String()
		}
		out = append(out, info)
	}
	return out
}

// check loads and analyses a Karta text as `karta validate` does, the
// override script as --script's is checked, and, with a CRD, the Karta
// against its schema as --crd's; each problem is placed at its line and
// column in the text.
func check(req *checkRequest) *checked {
	text, script := req.Karta, req.Script
	set, crdProblems := crdSchemas(req.CRD)
	c := &checked{problems: []problem{}, crdProblems: crdProblems}
	if strings.TrimSpace(text) == "" {
		c.problems = append(c.problems, problem{Severity: string(karta.SeverityError), Message: "no Karta: write one, or pick a built-in"})
		return c
	}
	data := []byte(text)
	loc := newLocator(data)
	kartas, err := karta.Load(data, kartaSource)
	if err != nil {
		var les karta.LoadErrors
		if !errors.As(err, &les) {
			c.problems = append(c.problems, problem{Severity: string(karta.SeverityError), Message: err.Error()})
			return c
		}
		for _, le := range les {
			line := le.Line
			col := loc.column(le.Document, le.Field, line)
			c.problems = append(c.problems, problem{Severity: string(karta.SeverityError), Document: le.Document, Line: line, Column: col, Field: le.Field, Message: le.Message})
		}
		return c
	}
	for i, k := range kartas {
		ck, problems := karta.Analyze(k, interpreter.ValidateOptions())
		for _, p := range problems {
			line, col := loc.field(i+1, p.Field)
			c.problems = append(c.problems, problem{Severity: string(p.Severity), Document: i + 1, Line: line, Column: col, Field: p.Field, Message: p.Message})
		}
		if problems.HasErrors() {
			continue
		}
		c.kartas = append(c.kartas, ck)
		if set != nil {
			for _, p := range schemaProblems(set, ck) {
				line, col := loc.field(i+1, p.Field)
				c.problems = append(c.problems, problem{Severity: string(p.Severity), Document: i + 1, Line: line, Column: col, Field: p.Field, Message: p.Message, Check: problemCRD})
			}
		}
	}
	if script != "" {
		for _, p := range interpreter.CheckScript(script) {
			c.problems = append(c.problems, problem{Severity: string(p.Severity), Field: "script", Message: p.String()})
		}
	}
	return c
}

// locator finds fields in a YAML text: their line, as the CLI's messages
// name it (yamlerr), and their column.
type locator struct {
	lines [][]byte
	docs  []*yaml.Node
}

func newLocator(data []byte) *locator {
	docs, _ := yamlerr.Parse(data, kartaSource) // a text that does not parse locates nothing
	return &locator{lines: bytes.Split(data, []byte("\n")), docs: docs}
}

// field is the line and column of a field path in document (1-based): its
// value's when the value starts on the key's line, else the key line's
// first character.
func (l *locator) field(document int, field string) (line, col int) {
	if document < 1 || document > len(l.docs) {
		return 0, 0
	}
	n, line := yamlerr.NodeAt(l.docs[document-1], yamlerr.ParsePath(field))
	if n != nil && n.Line == line && field != "" {
		return line, n.Column
	}
	return line, l.indent(line)
}

// column is where a load error's field is on its line, when the error
// names the line.
func (l *locator) column(document int, field string, line int) int {
	if line == 0 {
		return 0
	}
	if fl, col := l.field(document, field); fl == line {
		return col
	}
	return l.indent(line)
}

// indent is the column of a line's first character that is not a space.
func (l *locator) indent(line int) int {
	if line < 1 || line > len(l.lines) {
		return 0
	}
	text := l.lines[line-1]
	return len(text) - len(bytes.TrimLeft(text, " \t")) + 1
}
