package studio

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/karta/schemacheck"
)

// crdSource names the CRD editor's text in messages, and problemCRD marks
// the problems its schemas find in the Karta.
const (
	crdSource  = "crd.yaml"
	problemCRD = "crd"
)

// maxCRDBytes bounds the CRD editor's text: decoding a CRD costs about a
// second of CPU per MiB, and a CRD the API server stores is at most
// etcd's 1.5 MiB request.
const maxCRDBytes = 2 << 20

// crdLine is the line a CRD decoding error starts with.
var crdLine = regexp.MustCompile(`^crd\.yaml:(\d+)`)

// crdSchemas reads the CRD editor's text as `--crd FILE` is read: its
// schemas, or what is wrong with it. No text is no schemas (nil): then
// nothing is checked against one.
func crdSchemas(text string) (*schemacheck.Set, []problem) {
	if strings.TrimSpace(text) == "" {
		return nil, []problem{}
	}
	if len(text) > maxCRDBytes {
		return nil, []problem{{Severity: string(karta.SeverityError), Message: fmt.Sprintf("the CRD text is %d bytes, over the studio's %d (an API server stores none over 1.5 MiB)", len(text), maxCRDBytes)}}
	}
	crds, err := schemacheck.DecodeCRDs([]byte(text), crdSource)
	if err == nil {
		var set *schemacheck.Set
		if set, err = schemacheck.NewSet(crds...); err == nil {
			return set, []problem{}
		}
	}
	p := problem{Severity: string(karta.SeverityError), Message: err.Error()}
	if m := crdLine.FindStringSubmatch(p.Message); m != nil {
		// The decoder's messages start where they are: crd.yaml:LINE.
		p.Line, _ = strconv.Atoi(m[1])
		p.Column = newLocator([]byte(text)).indent(p.Line)
	}
	return nil, []problem{p}
}

// schemaProblems checks a Karta against the CRD's schema of its root kind
// (and of its references' kinds), as `karta validate --crd` does: a kind
// the pasted CRDs do not define or serve is an error, since they were
// pasted to check this Karta. Each problem is marked as the CRD's.
func schemaProblems(set *schemacheck.Set, c *karta.Checked) karta.Problems {
	root := c.Karta.Spec.StructureDefinition.RootComponent
	if root == nil || root.Kind == nil {
		return nil // validation reports it
	}
	gvk := root.Kind.GVK()
	at := field.NewPath("spec", "structureDefinition", "rootComponent", "kind").String()
	s, err := set.Lookup(gvk)
	switch {
	case errors.Is(err, schemacheck.ErrNoCRD), errors.Is(err, schemacheck.ErrNotServed):
		return karta.Problems{{Severity: karta.SeverityError, Field: at,
			Message: fmt.Sprintf("no served CRD for %s %s in the pasted CRDs: the Karta cannot be checked against them", gvk.GroupVersion(), gvk.Kind)}}
	case err != nil:
		return karta.Problems{{Severity: karta.SeverityError, Field: at, Message: fmt.Sprintf("in the pasted CRDs, %v", err)}}
	}
	var refs []*schemacheck.Schema
	for _, r := range c.Karta.Spec.References {
		if rs, err := set.Lookup(r.Kind.GVK()); err == nil {
			refs = append(refs, rs)
		}
	}
	return schemacheck.Check(c, s, refs...).Karta()
}
