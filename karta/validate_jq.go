package karta

import (
	"errors"
	"strings"

	"github.com/kartalua/karta/internal/third_party/gojq"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kartalua/karta/internal/jqexpr"
)

// exprResult is the outcome of checking one expression text, cached
// because Kartas repeat paths (guards, key paths) and the ReviseReplica
// target is looked at twice.
type exprResult struct {
	query    *gojq.Query // nil unless the expression has no problem
	messages []string
	// analysis is the checked form (see Checked).
	analysis *jqexpr.Analysis
	warning  string // ValidateOptions.CheckExpr's, for a query
}

// checkExpr runs the jq checks (parse, compile, safety walk) on expr and
// reports each problem at p. It returns the parsed query when there was no
// problem, so that callers can judge assignability.
func (v *validator) checkExpr(p *field.Path, expr string) *gojq.Query {
	r, ok := v.exprs[expr]
	if !ok {
		a, errs := jqexpr.Check(expr, v.vars...)
		for _, err := range errs {
			var e *jqexpr.Error
			if errors.As(err, &e) && e.IsDisallowed() {
				r.messages = append(r.messages, e.Msg)
			} else {
				msg := "invalid jq: " + err.Error()
				if strings.Contains(msg, "variable not defined") {
					msg += " (a variable of a Karta's expression is a reference: declare it in spec.references)"
				}
				r.messages = append(r.messages, msg)
			}
		}
		if len(errs) == 0 {
			r.query = a.Query
			r.analysis = a
			if v.opts.CheckExpr != nil {
				r.warning = v.opts.CheckExpr(a)
			}
		}
		v.exprs[expr] = r
	}
	for _, m := range r.messages {
		v.errorf(p, "%s", m)
	}
	if r.warning != "" {
		v.warnf(p, "%s", r.warning)
	}
	return r.query
}

// optionalExpr checks expr when it is set ("" means not defined).
func (v *validator) optionalExpr(p *field.Path, expr string) *gojq.Query {
	if expr == "" {
		return nil
	}
	return v.checkExpr(p, expr)
}

// requiredExpr checks an expression that must be set; what says what it
// is for.
func (v *validator) requiredExpr(p *field.Path, expr, what string) *gojq.Query {
	if expr == "" {
		v.errorf(p, "required: %s", what)
		return nil
	}
	return v.checkExpr(p, expr)
}

// writablePath checks an optional spec or fragment path, and warns when
// ReviseSpec cannot write through it. Reading still works, so this is the
// assignability report rather than an error.
func (v *validator) writablePath(p *field.Path, expr string) {
	q := v.optionalExpr(p, expr)
	if q == nil {
		return
	}
	if ok, reason := jqexpr.Assignable(q); !ok {
		v.warnf(p, "not assignable (%s); ReviseSpec through this path fails at run time", reason)
	}
}

// assignedPath checks a suspend or resume path, which exists only to be
// written: not being assignable is an error.
func (v *validator) assignedPath(p *field.Path, expr string) {
	q := v.requiredExpr(p, expr, "the path to write the value to")
	if q == nil {
		return
	}
	if ok, reason := jqexpr.Assignable(q); !ok {
		v.errorf(p, "not assignable (%s); Suspend and Resume write the value through this path", reason)
	}
}

// reviseReplicaTarget warns when the replicasPath that ReviseReplica would
// write (docs/karta.md, "ReviseReplica, Suspend and Resume") is not assignable: the root's, else that of the only
// pod-bearing component when it has a single instance.
func (v *validator) reviseReplicaTarget() {
	var target *compRef
	var bearing []*compRef
	for _, c := range v.comps {
		if c.c.IsPodBearing() {
			bearing = append(bearing, c)
		}
	}
	switch {
	case len(v.comps) > 0 && v.comps[0].root && replicasPath(v.comps[0].c) != "":
		target = v.comps[0]
	case len(bearing) == 1 && bearing[0].c.InstanceIDPath == "" && replicasPath(bearing[0].c) != "":
		target = bearing[0]
	default:
		return
	}
	path := replicasPath(target.c)
	r := v.exprs[path] // checked by scaleDefinition already
	if r.query == nil {
		return
	}
	if ok, reason := jqexpr.Assignable(r.query); !ok {
		v.warnf(target.path.Child("scaleDefinition", "replicasPath"),
			"not assignable (%s); ReviseReplica writes replicas through this path, so it is not generated", reason)
	}
}

func replicasPath(c *Component) string {
	if c.ScaleDefinition == nil {
		return ""
	}
	return c.ScaleDefinition.ReplicasPath
}
