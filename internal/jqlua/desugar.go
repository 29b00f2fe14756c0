package jqlua

import "github.com/kartalua/karta/internal/third_party/gojq"

// Builtins that gojq defines in jq (its builtin.jq) are translated as their
// definitions, written with the translated subset. Each rewrite is gojq's
// own definition, with isempty(g) spelt first((g | false), true) (its
// label/break form stops at g's first output, as first does), so outputs,
// their order and errors are gojq's.

// desugar returns the definition of f, or false when f is no such builtin.
func desugar(f *gojq.Func) (*gojq.Query, bool) {
	switch len(f.Args) {
	case 0:
		if q, ok := selectDefs[f.Name]; ok {
			return q, true
		}
		switch f.Name {
		case "first": // def first: .[0];
			return mustParse(`.[0]`), true
		case "last": // def last: .[-1];
			return mustParse(`.[-1]`), true
		case "any": // def any: any(.);
			return anyAll(true, iterQuery(), identityQuery()), true
		case "all":
			return anyAll(false, iterQuery(), identityQuery()), true
		}
	case 1:
		switch f.Name {
		case "any": // def any(y): any(.[]; y);
			return anyAll(true, iterQuery(), f.Args[0]), true
		case "all":
			return anyAll(false, iterQuery(), f.Args[0]), true
		}
	case 2:
		switch f.Name {
		case "any":
			return anyAll(true, f.Args[0], f.Args[1]), true
		case "all":
			return anyAll(false, f.Args[0], f.Args[1]), true
		}
	}
	return nil, false
}

// selectDefs are the type filters of builtin.jq.
var selectDefs = map[string]*gojq.Query{
	"values":    mustParse(`select(. != null)`),
	"nulls":     mustParse(`select(. == null)`),
	"arrays":    mustParse(`select(type == "array")`),
	"objects":   mustParse(`select(type == "object")`),
	"booleans":  mustParse(`select(type == "boolean")`),
	"numbers":   mustParse(`select(type == "number")`),
	"strings":   mustParse(`select(type == "string")`),
	"iterables": mustParse(`select(type | . == "array" or . == "object")`),
	"scalars":   mustParse(`select(type | . != "array" and . != "object")`),
}

// anyAll is
//
//	def any(g; y): isempty(g | select(y)) | not;   first((g | select(y) | true), false)
//	def all(g; y): isempty(g | select(y | not));   first((g | select(y | not) | false), true)
func anyAll(isAny bool, g, y *gojq.Query) *gojq.Query {
	cond, found, none := y, boolQuery(true), boolQuery(false)
	if !isAny {
		cond = pipeQuery(y, callQuery("not"))
		found, none = none, found
	}
	stream := pipeQuery(g, pipeQuery(callQuery("select", cond), found))
	return callQuery("first", &gojq.Query{Left: stream, Op: gojq.OpComma, Right: none})
}

func pipeQuery(l, r *gojq.Query) *gojq.Query {
	return &gojq.Query{Left: l, Op: gojq.OpPipe, Right: r}
}

func callQuery(name string, args ...*gojq.Query) *gojq.Query {
	return &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: name, Args: args}}}
}

func boolQuery(b bool) *gojq.Query {
	if b {
		return &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeTrue}}
	}
	return &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFalse}}
}

func identityQuery() *gojq.Query {
	return &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeIdentity}}
}

func iterQuery() *gojq.Query {
	return &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeIdentity, SuffixList: []*gojq.Suffix{{Iter: true}}}}
}

func mustParse(src string) *gojq.Query {
	q, err := gojq.Parse(src)
	if err != nil {
		panic(err)
	}
	return q
}
