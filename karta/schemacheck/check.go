package schemacheck

import (
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kartalua/karta/internal/jqexpr"
	"github.com/kartalua/karta/karta"
)

// Problem is one finding of Check: a karta.Problem at the Karta's field
// path, whose message names the schema path, and that schema path.
type Problem struct {
	karta.Problem
	// SchemaPath is where in the object the schema refutes or cannot
	// decide the path, as a field path with [*] for array items and .*
	// for map values (spec.replicatedJobs[*].template); "" for the root.
	SchemaPath string
}

// Problems are Check's findings, in the Karta's document order.
type Problems []Problem

// Karta returns the findings as karta.Problems, to print or to merge with
// validation's.
func (ps Problems) Karta() karta.Problems {
	out := make(karta.Problems, len(ps))
	for i, p := range ps {
		out[i] = p.Problem
	}
	return out
}

// role is what a path's outputs must be.
type role int

const (
	roleNone role = iota
	roleReplicas
	rolePodTemplate
	rolePodSpec
	roleObject
	roleArray
	roleString
	roleConditions
	rolePhase
	roleID
)

var roleWhat = map[role]string{
	roleReplicas:    "replica counts (integers, or int-or-string)",
	rolePodTemplate: "pod templates (objects with spec.containers)",
	rolePodSpec:     "pod specs (objects with containers)",
	roleObject:      "objects",
	roleArray:       "arrays",
	roleString:      "strings",
	roleConditions:  "condition lists (arrays of objects)",
	rolePhase:       "a phase (a string)",
	roleID:          "instance ids (strings or integers)",
}

// Check checks every path of the checked Karta that reads the workload
// object against s: existence, array steps, and the type each path's role
// needs; byPhase values against the phase's enum; suspend and resume
// values against their fields' types; gang minMemberPaths and
// per-replica countPaths as counts.
// Refutations are errors, paths the
// schema cannot decide (x-kubernetes-preserve-unknown-fields, values the
// walk cannot type) warnings. Paths evaluated on pods (podSelector, gang
// keys and filters) are not checked: a CRD's schema does not describe
// pods.
//
// refs are schemas of the kinds the Karta's references name (those the
// caller has): an expression reading $name is checked through the schema
// of its reference's kind and version, at schema paths that start with
// $name ($runtime.spec.template, $pods[*].status), as expressions over the
// workload are. A reference without a schema is a value the check cannot
// tell (a warning where a role needs it).
func Check(c *karta.Checked, s *Schema, refs ...*Schema) Problems {
	if c == nil || c.Karta == nil || s == nil {
		return nil
	}
	ch := &checker{c: c, s: s}
	ch.bindReferences(refs)
	sd := &c.Karta.Spec.StructureDefinition
	base := field.NewPath("spec", "structureDefinition")
	if sd.RootComponent != nil {
		ch.component(base.Child("rootComponent"), sd.RootComponent)
	}
	for i := range sd.ChildComponents {
		ch.component(base.Child("childComponents").Index(i), &sd.ChildComponents[i])
	}
	if ins := c.Karta.Spec.EffectiveInstructions(); ins != nil && ins.GangScheduling != nil {
		block := "instructions"
		if c.Karta.Spec.Instructions == nil {
			block = "optimizationInstructions"
		}
		gp := field.NewPath("spec", block, "gangScheduling")
		for i, g := range ins.GangScheduling.PodGroups {
			ch.path(gp.Child("podGroups").Index(i).Child("minMemberPath"), g.MinMemberPath, roleReplicas)
		}
		if g := ins.GangScheduling.PodGroup; g != nil {
			ch.path(gp.Child("podGroup", "minMemberPath"), g.MinMemberPath, roleReplicas)
			for i, sg := range g.SubGroups {
				ch.path(gp.Child("podGroup", "subGroups").Index(i).Child("minMemberPath"), sg.MinMemberPath, roleReplicas)
				if r := sg.PerReplica; r != nil {
					ch.path(gp.Child("podGroup", "subGroups").Index(i).Child("perReplica", "countPath"), r.CountPath, roleReplicas)
					ch.path(gp.Child("podGroup", "subGroups").Index(i).Child("perReplica", "minCountPath"), r.MinCountPath, roleReplicas)
				}
			}
		}
	}
	return ch.problems
}

type checker struct {
	c        *karta.Checked
	s        *Schema
	problems Problems
	seen     map[string]bool
	// vars are the references with a schema: a lookup is the object, a
	// list an array of them.
	vars map[string][]value
	// refKinds name the kind of each such reference, for messages.
	refKinds map[string]string
}

// bindReferences binds each reference whose kind and version has a
// schema among refs.
func (ch *checker) bindReferences(refs []*Schema) {
	for _, r := range ch.c.Karta.Spec.References {
		for _, sc := range refs {
			if sc == nil || sc.GVK != r.Kind.GVK() {
				continue
			}
			name := "$" + r.Name
			if ch.vars == nil {
				ch.vars, ch.refKinds = map[string][]value{}, map[string]string{}
			}
			if r.List != nil {
				ch.vars[name] = []value{{typ: "array", elems: []value{{s: sc.Structural, path: name + "[*]"}}}}
			} else {
				ch.vars[name] = []value{{s: sc.Structural, path: name}}
			}
			ch.refKinds[name] = sc.GVK.GroupVersion().String() + " " + sc.GVK.Kind
			break
		}
	}
}

func (ch *checker) add(sev karta.Severity, p *field.Path, schemaPath, msg string) {
	key := p.String() + "\x00" + msg
	if ch.seen[key] {
		return // two outputs of a path at the same place
	}
	if ch.seen == nil {
		ch.seen = map[string]bool{}
	}
	ch.seen[key] = true
	ch.problems = append(ch.problems, Problem{
		Problem:    karta.Problem{Severity: sev, Field: p.String(), Message: fmt.Sprintf("%s (schema: %s %s)", msg, ch.kind(schemaPath), describePath(schemaPath))},
		SchemaPath: schemaPath,
	})
}

// kind names the schema a schema path is in: the workload's, or a
// reference's for a path that starts with $name.
func (ch *checker) kind(schemaPath string) string {
	if strings.HasPrefix(schemaPath, "$") {
		name := schemaPath
		if i := strings.IndexAny(name, ".["); i >= 0 {
			name = name[:i]
		}
		if k, ok := ch.refKinds[name]; ok {
			return k
		}
	}
	return ch.s.GVK.GroupVersion().String() + " " + ch.s.GVK.Kind
}

// walk runs one expression over the schema, reports what the walk
// refutes, and returns the outputs.
func (ch *checker) walk(p *field.Path, expr string) ([]value, bool) {
	if expr == "" {
		return nil, false
	}
	a := jqexpr.Of(ch.c.Expr(expr))
	if a == nil || a.Query == nil {
		return nil, false // invalid: validation reports it
	}
	w := &walker{vars: maps.Clone(ch.vars)}
	out := w.query(a.Query, []value{{s: ch.s.Structural}})
	for _, f := range w.findings {
		ch.add(karta.SeverityError, p, f.path, f.msg)
	}
	return out, len(w.findings) == 0
}

// path walks an expression and checks its outputs for a role.
func (ch *checker) path(p *field.Path, expr string, r role) []value {
	out, ok := ch.walk(p, expr)
	if ok && r != roleNone {
		ch.role(p, out, r)
	}
	return out
}

func (ch *checker) component(p *field.Path, c *karta.Component) {
	if sd := c.SpecDefinition; sd != nil {
		sp := p.Child("specDefinition")
		ch.path(sp.Child("podTemplateSpecPath"), sd.PodTemplateSpecPath, rolePodTemplate)
		ch.path(sp.Child("podSpecPath"), sd.PodSpecPath, rolePodSpec)
		ch.path(sp.Child("metadataPath"), sd.MetadataPath, roleObject)
		if f := sd.FragmentedPodSpecDefinition; f != nil {
			fp := sp.Child("fragmentedPodSpecDefinition")
			for _, fr := range f.Fragments() {
				ch.path(fp.Child(fr.Field), fr.Path, fragmentRoles[fr.Key])
			}
		}
		if v := sd.View; v != nil {
			vp := sp.Child("view")
			for _, e := range v.Views() {
				ch.path(vp.Child(e.Field), e.Path, viewRoles[e.Key])
			}
		}
	}
	if sc := c.ScaleDefinition; sc != nil {
		sp := p.Child("scaleDefinition")
		ch.path(sp.Child("replicasPath"), sc.ReplicasPath, roleReplicas)
		ch.path(sp.Child("minReplicasPath"), sc.MinReplicasPath, roleReplicas)
		ch.path(sp.Child("maxReplicasPath"), sc.MaxReplicasPath, roleReplicas)
	}
	if st := c.StatusDefinition; st != nil {
		ch.status(p.Child("statusDefinition"), st)
	}
	ch.path(p.Child("instanceIdPath"), c.InstanceIDPath, roleID)
	if sd := c.SuspendDefinition; sd != nil {
		sp := p.Child("suspendDefinition")
		for i := range sd.SuspendActions {
			ch.action(sp.Child("suspendActions").Index(i), &sd.SuspendActions[i])
		}
		for i := range sd.ResumeActions {
			ch.action(sp.Child("resumeActions").Index(i), &sd.ResumeActions[i])
		}
	}
}

var fragmentRoles = map[string]role{
	"schedulerName": roleString, "labels": roleObject, "annotations": roleObject, "resources": roleObject,
	"resourceClaims": roleArray, "podAffinity": roleObject, "nodeAffinity": roleObject, "containers": roleArray,
	"container": roleObject, "priorityClassName": roleString, "image": roleString, "initContainers": roleArray,
}

// viewRoles are the roles of a view's values: a fragment's, or the
// pod definition's.
var viewRoles = func() map[string]role {
	m := map[string]role{"podTemplateSpec": rolePodTemplate, "podSpec": rolePodSpec, "metadata": roleObject}
	for k, r := range fragmentRoles {
		m[k] = r
	}
	return m
}()

func (ch *checker) status(p *field.Path, st *karta.StatusDefinition) {
	var phases []value
	if pd := st.PhaseDefinition; pd != nil {
		phases = ch.path(p.Child("phaseDefinition", "path"), pd.Path, rolePhase)
	}
	if cd := st.ConditionsDefinition; cd != nil {
		out := ch.path(p.Child("conditionsDefinition", "path"), cd.Path, roleConditions)
		ch.conditionFields(p.Child("conditionsDefinition"), out, cd)
	}
	enum, enumPath := phaseEnum(phases)
	for _, m := range st.StatusMappings.InPrecedence() {
		mp := p.Child("statusMappings", m.Key)
		for i, matcher := range m.Matchers {
			if matcher.ByExpression != nil {
				ch.walk(mp.Index(i).Child("byExpression", "expression"), matcher.ByExpression.Expression)
			}
			if matcher.ByPhase != "" && enum != nil && !enum[matcher.ByPhase] {
				ch.add(karta.SeverityError, mp.Index(i).Child("byPhase"), enumPath,
					fmt.Sprintf("%q is not a phase the schema allows (%s: %s)", matcher.ByPhase, enumPath, strings.Join(sortedKeys(enum), ", ")))
			}
		}
	}
}

// phaseEnum is the union of the phase outputs' enums, nil when some output
// has none (any string may come).
func phaseEnum(phases []value) (map[string]bool, string) {
	if len(phases) == 0 {
		return nil, ""
	}
	enum := map[string]bool{}
	for _, v := range phases {
		if v.s == nil || v.s.ValueValidation == nil || len(v.s.ValueValidation.Enum) == 0 {
			return nil, ""
		}
		for _, e := range v.s.ValueValidation.Enum {
			if str, ok := e.Object.(string); ok {
				enum[str] = true
			}
		}
	}
	return enum, phases[0].path
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// conditionFields checks that the conditions' items have the type and
// status fields the definition names (and the message and reason ones,
// which are optional: a warning).
func (ch *checker) conditionFields(p *field.Path, out []value, cd *karta.ConditionsDefinition) {
	for _, v := range out {
		if v.schemaType() != "array" || v.s.Items == nil || v.s.Items.Type != "object" {
			continue // the role check reported it
		}
		items := v.s.Items
		if items.XPreserveUnknownFields || (items.AdditionalProperties != nil && len(items.Properties) == 0) {
			continue
		}
		names := make([]string, 0, len(items.Properties))
		for n := range items.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, f := range []struct {
			key, name string
			required  bool
		}{
			{"typeFieldName", cd.TypeFieldName, true},
			{"statusFieldName", cd.StatusFieldName, true},
			{"messageFieldName", cd.MessageFieldName, false},
			{"reasonFieldName", cd.ReasonFieldName, false},
		} {
			if f.name == "" {
				continue
			}
			if _, ok := items.Properties[f.name]; ok {
				continue
			}
			msg := fmt.Sprintf("the conditions at %s have no field %q (they have: %s)", v.path, f.name, strings.Join(names, ", "))
			if f.required {
				ch.add(karta.SeverityError, p.Child(f.key), v.path+"[*]", msg)
			} else {
				ch.add(karta.SeverityWarning, p.Child(f.key), v.path+"[*]", msg+`; set it to "" if they have none`)
			}
		}
	}
}

// action checks a suspend or resume path and its value's type.
func (ch *checker) action(p *field.Path, a *karta.SuspendAction) {
	out, ok := ch.walk(p.Child("path"), a.Path)
	if !ok {
		return
	}
	val, err := a.DecodedValue()
	if err != nil {
		return // validation reports it
	}
	got := jsonType(val)
	for _, v := range out {
		want := v.schemaType()
		if v.s == nil || want == "" || fits(got, want) {
			continue
		}
		ch.add(karta.SeverityError, p.Child("value"), v.path,
			fmt.Sprintf("the value is %s, but %s is %s", article(got), v.path, article(want)))
	}
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			return "number"
		}
		return "integer"
	case float64, int, int64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

// fits reports whether a value of JSON type got may stand where the
// schema says want.
func fits(got, want string) bool {
	switch {
	case got == want, got == "null":
		return true
	case want == "number":
		return got == "integer"
	case want == "int-or-string":
		return got == "integer" || got == "string"
	}
	return false
}

// role checks the outputs of a path against what its role needs.
func (ch *checker) role(p *field.Path, out []value, r role) {
	for _, v := range out {
		if !v.known() {
			ch.add(karta.SeverityWarning, p, v.path, fmt.Sprintf("cannot tell whether the path yields %s: %s", roleWhat[r], orWord(v.why, "not known")))
			continue
		}
		if v.s == nil {
			ch.computedRole(p, v, r)
			continue
		}
		ch.schemaRole(p, v, r)
	}
}

// computedRole checks a value the expression computes (1, .a * 2,
// "x-\(.y)").
func (ch *checker) computedRole(p *field.Path, v value, r role) {
	ok := false
	switch r {
	case roleReplicas:
		ok = v.typ == "number" || v.typ == "null" || v.typ == "string" // "1": decimal digits count
	case roleID:
		ok = v.typ == "string" || v.typ == "number"
	case rolePhase, roleString:
		ok = v.typ == "string" || v.typ == "null"
	case roleObject, rolePodTemplate, rolePodSpec:
		ok = v.typ == "object" || v.typ == "null"
	case roleArray, roleConditions:
		ok = v.typ == "array" || v.typ == "null"
	}
	if !ok {
		ch.add(karta.SeverityError, p, "", fmt.Sprintf("the path computes %s, not %s", article(v.typ), roleWhat[r]))
	}
}

// schemaRole checks a value the schema describes.
func (ch *checker) schemaRole(p *field.Path, v value, r role) {
	t := v.schemaType()
	if t == "" { // preserve-unknown-fields without a type
		ch.add(karta.SeverityWarning, p, v.path, fmt.Sprintf("cannot tell whether the path yields %s: %s", roleWhat[r], preserveWhy(v)))
		return
	}
	wrong := func() {
		ch.add(karta.SeverityError, p, v.path, fmt.Sprintf("%s is %s, but the path must yield %s", v.path, article(t), roleWhat[r]))
	}
	switch r {
	case roleReplicas:
		switch {
		case t == "integer", t == "int-or-string":
		case t == "number":
			ch.add(karta.SeverityWarning, p, v.path, fmt.Sprintf("%s is a number that may be a fraction; replica counts are integers", v.path))
		case t == "string" && (strings.HasSuffix(v.path, "annotations.*") || strings.HasSuffix(v.path, "labels.*")):
			// Knative keeps its scale in annotations: a string of
			// digits counts, anything else fails at run time.
			ch.add(karta.SeverityWarning, p, v.path, fmt.Sprintf("%s is a string; it counts as replicas only when it holds decimal digits", v.path))
		default:
			wrong()
		}
	case roleID:
		if t != "string" && t != "integer" && t != "int-or-string" {
			wrong()
		}
	case rolePhase, roleString:
		if t != "string" {
			wrong()
		}
	case roleObject:
		if t != "object" {
			wrong()
		}
	case roleArray:
		if t != "array" {
			wrong()
		}
	case roleConditions:
		switch {
		case t != "array":
			wrong()
		case v.s.Items == nil:
			ch.add(karta.SeverityWarning, p, v.path, fmt.Sprintf("cannot tell whether the items of %s are conditions: the schema does not describe them", v.path))
		case v.s.Items.Type != "object" && !v.s.Items.XPreserveUnknownFields:
			ch.add(karta.SeverityError, p, v.path+"[*]", fmt.Sprintf("the items of %s are %s, but conditions are objects", v.path, article(v.s.Items.Type)))
		}
	case rolePodTemplate:
		ch.podTemplate(p, v)
	case rolePodSpec:
		ch.podSpec(p, v)
	}
}

func (ch *checker) podTemplate(p *field.Path, v value) {
	s := v.s
	if s.Type != "object" {
		ch.add(karta.SeverityError, p, v.path, fmt.Sprintf("%s is %s, but the path must yield %s", v.path, article(v.schemaType()), roleWhat[rolePodTemplate]))
		return
	}
	spec, ok := s.Properties["spec"]
	if !ok {
		if _, isSpec := s.Properties["containers"]; isSpec {
			ch.add(karta.SeverityError, p, v.path, fmt.Sprintf("%s is a pod spec (it has containers), not a pod template; use podSpecPath", v.path))
			return
		}
		ch.openOr(p, v, "spec", "it has no spec; a pod template is {metadata, spec}")
		return
	}
	ch.containers(p, value{s: &spec, path: joinPath(v.path, "spec")})
}

func (ch *checker) podSpec(p *field.Path, v value) {
	s := v.s
	if s.Type != "object" {
		ch.add(karta.SeverityError, p, v.path, fmt.Sprintf("%s is %s, but the path must yield %s", v.path, article(v.schemaType()), roleWhat[rolePodSpec]))
		return
	}
	if _, ok := s.Properties["containers"]; !ok {
		if spec, ok := s.Properties["spec"]; ok {
			if _, tmpl := spec.Properties["containers"]; tmpl {
				ch.add(karta.SeverityError, p, v.path, fmt.Sprintf("%s is a pod template (it has spec.containers), not a pod spec; use podTemplateSpecPath", v.path))
				return
			}
		}
	}
	ch.containers(p, v)
}

// containers checks that a pod spec schema has a containers array.
func (ch *checker) containers(p *field.Path, spec value) {
	s := spec.s
	if s.Type != "object" && s.Type != "" {
		ch.add(karta.SeverityError, p, spec.path, fmt.Sprintf("%s is %s, not a pod spec", spec.path, article(spec.schemaType())))
		return
	}
	c, ok := s.Properties["containers"]
	if !ok {
		ch.openOr(p, spec, "containers", "it has no containers, so it is not a pod spec")
		return
	}
	if c.Type != "array" {
		ch.add(karta.SeverityError, p, joinPath(spec.path, "containers"),
			fmt.Sprintf("%s is %s, but a pod spec's containers are an array", joinPath(spec.path, "containers"), article(c.Type)))
	}
}

// openOr reports a missing field: undecidable (a warning) when the schema
// keeps unknown fields there, refuted (an error) otherwise.
func (ch *checker) openOr(p *field.Path, v value, name, refuted string) {
	s := v.s
	if s.XPreserveUnknownFields || (s.AdditionalProperties != nil && (s.AdditionalProperties.Bool || s.AdditionalProperties.Structural != nil)) {
		ch.add(karta.SeverityWarning, p, v.path, fmt.Sprintf("cannot tell whether %s has %s: %s", v.path, name, preserveWhy(v)))
		return
	}
	ch.add(karta.SeverityError, p, v.path, fmt.Sprintf("%s: %s", v.path, refuted))
}
