package main

import (
	"context"
	"fmt"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// crdHelp is --crd's help on the commands that run a Karta on objects.
const crdHelp = "a CustomResourceDefinition `FILE` (repeatable): a path of the Karta that its schema refutes " +
	"(a misspelt field reads nothing) is warned about on standard error, with the schema's did-you-mean"

// schemaWarner checks each Karta a run uses, once, against the --crd
// schemas: a typo'd path (.spec.templat) matches nothing on any object of
// the kind, so its hook answers empty pods or Undefined; the schema says
// why. These are warnings — the hooks did run and answered — so they never
// change the exit code; karta validate --crd makes them errors.
type schemaWarner struct {
	src  schemaSource
	done map[*karta.Karta]bool
}

// newSchemaWarner reads the --crd files; none: nil, which warns nothing.
func newSchemaWarner(s streams, files []string) (*schemaWarner, error) {
	if len(files) == 0 {
		return nil, nil
	}
	src, err := readCRDs(s, files)
	if err != nil {
		return nil, err
	}
	return &schemaWarner{src: src, done: map[*karta.Karta]bool{}}, nil
}

// warn prints the schema's problems with p's Karta, the first time it is
// met, each after where (the first object it runs on).
func (w *schemaWarner) warn(ctx context.Context, s streams, where string, p *interpreter.Program) {
	if w == nil || w.done[p.Karta()] {
		return
	}
	w.done[p.Karta()] = true
	checked, _ := karta.Analyze(p.Karta(), karta.ValidateOptions{})
	if checked == nil {
		return
	}
	problems, err := schemaProblems(ctx, w.src, checked)
	if err != nil {
		fmt.Fprintf(s.err, "%s: warning: karta %q: not checked against the --crd schemas: %s\n", where, p.Name(), oneLine(err.Error()))
		return
	}
	for _, pr := range problems {
		msg := pr.Message
		if pr.Field != "" {
			msg = pr.Field + ": " + msg
		}
		fmt.Fprintf(s.err, "%s: warning: karta %q: %s\n", where, p.Name(), oneLine(msg))
	}
}
