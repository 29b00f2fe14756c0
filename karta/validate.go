package karta

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kartalua/karta/internal/jqexpr"
)

// ValidateOptions lets layers above this package add checks it cannot do
// itself (it knows nothing of Lua).
// +kubebuilder:object:generate=false
type ValidateOptions struct {
	// CheckScript, when set, is called with spec.luaScript when it is not
	// empty. It returns problems whose Field is relative to the script (""
	// for the script itself); Validate prefixes them with spec.luaScript. A
	// problem without a Severity counts as an error.
	CheckScript func(script string) Problems
	// CheckExpr, when set, is called with the checked form of each jq
	// expression that passed the jq checks; a non-empty result is reported
	// as a warning at every field holding the expression (karta validate
	// --target uses it to report what a back end cannot run).
	CheckExpr func(e Expr) string
}

// Validate checks a Karta against every rule of docs/reference.md,
// "Validation", and returns all problems at once, errors and warnings, in
// document order. It is ValidateWithOptions with no options.
func Validate(k *Karta) Problems { return ValidateWithOptions(k, ValidateOptions{}) }

// ValidateWithOptions is Validate with checks added by the caller.
//
// All rules run in one pass. A rule whose prerequisites are broken is
// skipped rather than reported on top of the breakage:
//   - the ownership cycle check needs unique, non-empty component names
//     (it follows only the ownerRefs that resolve);
//   - the v2 subgroup nesting check needs a sound tree: a root, unique
//     non-empty names, every ownerRef resolved and no cycle;
//   - member checks that need a component (the narrowing warning) skip
//     members that name no component, which are already errors;
//   - assignability is judged only for expressions that passed the jq
//     checks.
func ValidateWithOptions(k *Karta, opts ValidateOptions) Problems {
	if k == nil {
		return Problems{{Severity: SeverityError, Message: "no Karta to validate"}}
	}
	v := newValidator(k, opts)
	v.run()
	return v.problems
}

// run applies every rule, in one pass, and sorts the problems.
func (v *validator) run() {
	v.references()
	v.structure()
	for _, c := range v.comps {
		v.component(c)
	}
	v.typeSelectors()
	v.reviseReplicaTarget()
	v.additionalChildKinds()
	v.instructions()
	v.luaScript()
	sortByDocumentOrder(v.problems)
}

// validator holds what the rules share: the components with their paths
// and what the structure checks learned about the tree.
type validator struct {
	k        *Karta
	opts     ValidateOptions
	problems Problems

	comps []*compRef
	// byName maps each non-empty name to its first component.
	byName map[string]*compRef
	// namesOK is false when a name is empty or duplicated.
	namesOK bool
	// treeOK is true when the components form a tree under the root: names
	// are OK, every child's ownerRef resolves and there is no cycle.
	treeOK bool

	exprs map[string]exprResult
	// vars are the jq variables of the Karta's references ("$name"),
	// bound in every expression but the references' own.
	vars []string
	// refExprs are the references' own expressions, checked without
	// variables.
	refExprs map[string]*jqexpr.Analysis
	// haveNames is names()'s message, made once: a message per component
	// must not cost a walk over all of them.
	haveNames string
}

// compRef is a component with its field path and, once resolved, its
// parent.
type compRef struct {
	c      *Component
	path   *field.Path
	root   bool
	parent *compRef
}

func newValidator(k *Karta, opts ValidateOptions) *validator {
	v := &validator{k: k, opts: opts, byName: map[string]*compRef{}, exprs: map[string]exprResult{}, refExprs: map[string]*jqexpr.Analysis{}}
	sd := &k.Spec.StructureDefinition
	base := field.NewPath("spec", "structureDefinition")
	if sd.RootComponent != nil {
		v.comps = append(v.comps, &compRef{c: sd.RootComponent, path: base.Child("rootComponent"), root: true})
	}
	for i := range sd.ChildComponents {
		v.comps = append(v.comps, &compRef{c: &sd.ChildComponents[i], path: base.Child("childComponents").Index(i)})
	}
	for _, c := range v.comps {
		if _, seen := v.byName[c.c.Name]; !seen && c.c.Name != "" {
			v.byName[c.c.Name] = c
		}
	}
	return v
}

func (v *validator) add(s Severity, p *field.Path, format string, args ...any) {
	f := ""
	if p != nil {
		f = p.String()
	}
	v.problems = append(v.problems, Problem{Severity: s, Field: f, Message: fmt.Sprintf(format, args...)})
}

func (v *validator) errorf(p *field.Path, format string, args ...any) {
	v.add(SeverityError, p, format, args...)
}

func (v *validator) warnf(p *field.Path, format string, args ...any) {
	v.add(SeverityWarning, p, format, args...)
}

// names lists the component names for messages ("have: a, b, c"), at
// most maxListed of them.
func (v *validator) names() string {
	if v.haveNames == "" {
		v.haveNames = v.listNames()
	}
	return v.haveNames
}

func (v *validator) listNames() string {
	var out []string
	seen := map[string]bool{}
	for _, c := range v.comps {
		if c.c.Name != "" && !seen[c.c.Name] {
			seen[c.c.Name] = true
			out = append(out, c.c.Name)
		}
	}
	if len(out) == 0 {
		return "have: no named components"
	}
	return "have: " + listCapped(out, ", ")
}

// component runs the rules that concern one component on its own, in the
// order of its fields.
func (v *validator) component(c *compRef) {
	v.specDefinition(c)
	v.scaleDefinition(c)
	if sd := c.c.StatusDefinition; sd != nil {
		if !c.root {
			v.warnf(c.path.Child("statusDefinition"),
				"only the root component's statusDefinition is used; remove it from component %q", c.c.Name)
		}
		v.statusDefinition(c.path.Child("statusDefinition"), sd)
	}
	v.optionalExpr(c.path.Child("instanceIdPath"), c.c.InstanceIDPath)
	v.podSelector(c)
	v.suspendDefinition(c)
}

// luaScript hands the karta extension to the caller's checker.
func (v *validator) luaScript() {
	if v.opts.CheckScript == nil || v.k.Spec.LuaScript == "" {
		return
	}
	base := field.NewPath("spec", "luaScript").String()
	for _, p := range v.opts.CheckScript(v.k.Spec.LuaScript) {
		switch {
		case p.Field == "":
			p.Field = base
		case strings.HasPrefix(p.Field, "["):
			p.Field = base + p.Field
		default:
			p.Field = base + "." + p.Field
		}
		if p.Severity == "" {
			p.Severity = SeverityError
		}
		v.problems = append(v.problems, p)
	}
}
