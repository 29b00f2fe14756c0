package interpreter

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kartalua/karta/internal/argohealth"
	"github.com/kartalua/karta/internal/jqlua"
	"github.com/kartalua/karta/internal/third_party/gojq"
	"github.com/kartalua/karta/karta"
)

// The Argo CD export: a Karta's status as an Argo CD health.lua, and its
// suspendDefinition as suspend and resume actions. It reuses the Karmada
// export's pieces — the jq translator onto jqlua's portable runtime, the
// exporter's statusOf (the generic status of a Karta) and its helpers —
// so the status an exported script computes is the one Karmada's export
// computes, and the jq semantics are written once (jqlua).

// ArgoHealthWords maps karta's generic statuses to Argo CD's health words:
// the one table both the export and its tests read. A batch kind (one that
// runs to completion: its Karta maps a Completed status) that is Running
// is Progressing — it has work left — and a serving kind that is Running
// is Healthy. Undefined has no word: the script returns nil, Argo CD's "no
// assessment".
func ArgoHealthWords(batch bool) map[karta.Status]string {
	running := argohealth.StatusHealthy
	if batch {
		running = argohealth.StatusProgressing
	}
	return map[karta.Status]string{
		karta.StatusInitializing: argohealth.StatusProgressing,
		karta.StatusRunning:      running,
		karta.StatusCompleted:    argohealth.StatusHealthy,
		karta.StatusFailed:       argohealth.StatusDegraded,
		karta.StatusDegraded:     argohealth.StatusDegraded,
		karta.StatusSuspended:    argohealth.StatusSuspended,
		karta.StatusSuspending:   argohealth.StatusProgressing,
		karta.StatusResuming:     argohealth.StatusProgressing,
	}
}

// IsBatch reports whether the Karta describes a batch kind: its root
// component maps a Completed status.
func (p *Program) IsBatch() bool {
	sd := p.karta.Spec.StructureDefinition.RootComponent.StatusDefinition
	return sd != nil && len(sd.StatusMappings.Completed) > 0
}

// ArgoHealthMessage is the message the exported health script gives, from
// the workload's conditions: the message of the last condition whose
// status is "True" and whose message is not empty, else of the last
// condition with a message, else "".
func ArgoHealthMessage(conds []Condition) string {
	var last, lastTrue string
	for _, c := range conds {
		if c.Message == nil || *c.Message == "" {
			continue
		}
		last = *c.Message
		if c.Status != nil && *c.Status == "True" {
			lastTrue = *c.Message
		}
	}
	if lastTrue != "" {
		return lastTrue
	}
	return last
}

// ArgoExport is a Karta as an Argo CD resource customization: the scripts
// of its <group>/<Kind> folder, by path relative to that folder.
type ArgoExport struct {
	// Group and Kind name the folder: <Group>/<Kind>, or <Kind> for the
	// core group.
	Group, Kind string
	// Scripts are health.lua, and with a suspendDefinition
	// actions/discovery.lua, actions/suspend/action.lua and
	// actions/resume/action.lua.
	Scripts map[string]string
}

// ExportArgo renders the Program as an Argo CD resource customization. The
// health script is self-contained: jqlua's portable runtime (pure Lua, Lua
// 5.1's base, string, table and math libraries — what Argo CD gives its
// built-in scripts, and an argocd-cm script with useOpenLibs), the Karta's
// jq expressions translated onto it, the generic status of the Karta, then
// its Argo CD word (ArgoHealthWords) with a message from the conditions
// (ArgoHealthMessage). A Karta whose InterpretStatus a script overrides,
// or with a jq expression only gojq can run, fails with an *ExportError.
func (p *Program) ExportArgo() (*ArgoExport, error) {
	ex, err := p.exportArgo()
	var ee *ExportError
	if errors.As(err, &ee) {
		c := *ee
		c.Target = "Argo CD"
		return nil, &c
	}
	return ex, err
}

func (p *Program) exportArgo() (*ArgoExport, error) {
	for _, o := range p.overrides {
		for _, g := range o.globals {
			if g == string(HookInterpretStatus) {
				return nil, &ExportError{Karta: p.name, Reason: fmt.Sprintf("%s overrides InterpretStatus, which the Argo CD export cannot carry", o.chunk)}
			}
		}
		if o.argo {
			return nil, &ExportError{Karta: p.name, Reason: fmt.Sprintf("%s: an Argo CD health script is not exported", o.chunk)}
		}
	}
	health, err := p.argoHealthLua()
	if err != nil {
		return nil, err
	}
	ex := &ArgoExport{Group: p.gvk.Group, Kind: p.gvk.Kind, Scripts: map[string]string{"health.lua": health}}
	if err := p.argoSuspendActions(ex); err != nil {
		return nil, err
	}
	return ex, nil
}

// argoPrelude is the Karmada export's helpers without its first line,
// which loads Karmada's kube library: Argo CD has none, and the status
// needs none.
func argoPrelude() (string, error) {
	const kubeLine = "local kube = require(\"kube\")\n"
	rest, ok := strings.CutPrefix(exportPrelude, kubeLine)
	if !ok {
		return "", fmt.Errorf("the export prelude no longer begins with %q (a karta bug)", strings.TrimSpace(kubeLine))
	}
	return rest, nil
}

func (p *Program) argoHealthLua() (string, error) {
	e := &exporter{p: p, u: jqlua.NewPortableUnit()}
	if err := e.status(); err != nil {
		return "", err
	}
	conds := ""
	sd := p.karta.Spec.StructureDefinition.RootComponent.StatusDefinition
	var cd *karta.ConditionsDefinition
	if sd != nil && sd.ConditionsDefinition != nil && sd.ConditionsDefinition.Path != "" {
		cd = sd.ConditionsDefinition
		f, err := e.expr("conditionsDefinition.path", cd.Path)
		if err != nil {
			return "", err
		}
		conds = f
	}
	prelude, err := argoPrelude()
	if err != nil {
		return "", err
	}

	var b strings.Builder
	fmt.Fprintf(&b, "-- Generated by karta from Karta %s: the Argo CD health of %s.\n", luaEscape(p.name), luaEscape(p.gvk.String()))
	b.WriteString("-- Self-contained: Lua 5.1's base, string, table and math libraries only (Argo CD's\n")
	b.WriteString("-- built-in scripts have them; in argocd-cm set resource.customizations.useOpenLibs).\n")
	b.WriteString("-- The jq runtime (jqlua's portable runtime), then the Karta's jq expressions.\n")
	b.WriteString(jqlua.PortablePrelude)
	b.WriteString("\n")
	b.WriteString(e.u.Lua())
	b.WriteString("\n")
	b.WriteString(prelude)
	b.WriteString("local E = {}\n")
	for i, x := range e.exprs {
		fmt.Fprintf(&b, "E[%d] = function(ins) return run(%s, ins[1], %s) end\n", i+1, x.ref, luaString(x.field))
	}
	b.WriteString("\n")
	b.WriteString(e.b.String())

	words := ArgoHealthWords(p.IsBatch())
	statuses := make([]string, 0, len(words))
	for s := range words {
		statuses = append(statuses, string(s))
	}
	sort.Strings(statuses)
	kindWord := "serving"
	if p.IsBatch() {
		kindWord = "batch"
	}
	fmt.Fprintf(&b, "-- karta's generic status to Argo CD's health (a %s kind); Undefined has none.\nlocal ARGO = {", kindWord)
	for i, s := range statuses {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s = %s", s, luaString(words[karta.Status(s)]))
	}
	b.WriteString("}\n\n")
	b.WriteString("-- The message: the last condition with status True and a message, else the last\n-- condition with a message.\nlocal function message(obj)\n")
	if conds == "" {
		b.WriteString("  return \"\"\nend\n\n")
	} else {
		fmt.Fprintf(&b, `  local last, lastTrue = "", ""
  for _, arr in ipairs(%s({W(obj)})) do
    if arr ~= NULL and type(arr) == "table" then
      for _, c in ipairs(arr) do
        local ty, m = c[%s], c[%s]
        if type(ty) == "string" and ty ~= "" and type(m) == "string" and m ~= "" then
          last = m
          if c[%s] == "True" then lastTrue = m end
        end
      end
    end
  end
  if lastTrue ~= "" then return lastTrue end
  return last
end

`, conds, luaString(cd.TypeFieldName), luaString(cd.MessageFieldName), luaString(cd.StatusFieldName))
	}
	b.WriteString(`local word = ARGO[statusOf(obj)]
if word == nil then
  return nil
end
return {status = word, message = message(obj)}
`)
	return b.String(), nil
}

// argoSuspendActions adds the suspend and resume actions of the root
// component's suspendDefinition, whose paths must be chains of fields.
func (p *Program) argoSuspendActions(ex *ArgoExport) error {
	root := p.karta.Spec.StructureDefinition.RootComponent
	for _, c := range p.model.comps {
		if c.parent != nil && c.c.SuspendDefinition != nil {
			return &ExportError{Karta: p.name, Reason: fmt.Sprintf("component %q: the Argo CD export carries the root component's suspendDefinition only", c.c.Name)}
		}
	}
	sd := root.SuspendDefinition
	if sd == nil {
		return nil
	}
	type write struct {
		fields []string
		value  string
		scalar bool
	}
	writes := func(field string, actions []karta.SuspendAction) ([]write, error) {
		var out []write
		for i := range actions {
			a := &actions[i]
			where := fmt.Sprintf("suspendDefinition.%s[%d].path", field, i)
			an, err := p.model.exprs.analysis(a.Path)
			if err != nil {
				return nil, &ExportError{Karta: p.name, Field: where, Expr: a.Path, Reason: err.Error()}
			}
			fields, ok := fieldChain(an.Query)
			if !ok {
				fields, ok = bracketChain(an.Query)
			}
			if !ok {
				return nil, &ExportError{Karta: p.name, Field: where, Expr: a.Path, Reason: "the Argo CD export carries only a chain of fields (.a.b[\"c\"])"}
			}
			v, err := a.DecodedValue()
			if err != nil {
				return nil, &ExportError{Karta: p.name, Field: where, Reason: err.Error()}
			}
			lit, err := luaLiteral(v)
			if err != nil {
				return nil, &ExportError{Karta: p.name, Field: where, Reason: err.Error()}
			}
			_, isMap := v.(map[string]any)
			_, isList := v.([]any)
			out = append(out, write{fields: fields, value: lit, scalar: !isMap && !isList})
		}
		return out, nil
	}
	suspend, err := writes("suspendActions", sd.SuspendActions)
	if err != nil {
		return err
	}
	resume, err := writes("resumeActions", sd.ResumeActions)
	if err != nil {
		return err
	}
	header := fmt.Sprintf("-- Generated by karta from Karta %s: ", luaEscape(p.name))
	action := func(what string, ws []write) string {
		var b strings.Builder
		fmt.Fprintf(&b, "%s%s %s as its suspendDefinition says.\n", header, what, luaEscape(p.gvk.Kind))
		for _, w := range ws {
			b.WriteString("do\n  local t = obj\n")
			for _, f := range w.fields[:len(w.fields)-1] {
				fmt.Fprintf(&b, "  if type(t[%[1]s]) ~= \"table\" then t[%[1]s] = {} end\n  t = t[%[1]s]\n", luaString(f))
			}
			fmt.Fprintf(&b, "  t[%s] = %s\nend\n", luaString(w.fields[len(w.fields)-1]), w.value)
		}
		b.WriteString("return obj\n")
		return b.String()
	}
	ex.Scripts["actions/suspend/action.lua"] = action("suspends", suspend)
	ex.Scripts["actions/resume/action.lua"] = action("resumes", resume)

	var d strings.Builder
	fmt.Fprintf(&d, "%sthe actions of %s.\n", header, luaEscape(p.gvk.Kind))
	d.WriteString("-- Suspended when every suspend write already holds: then only resume is offered.\n")
	d.WriteString("local function get(t, ...)\n  for _, k in ipairs({...}) do\n    if type(t) ~= \"table\" then return nil end\n    t = t[k]\n  end\n  return t\nend\n")
	d.WriteString("local suspended = true\n")
	for _, w := range suspend {
		if !w.scalar {
			d.WriteString("suspended = false\n")
			continue
		}
		quoted := make([]string, len(w.fields))
		for i, f := range w.fields {
			quoted[i] = luaString(f)
		}
		fmt.Fprintf(&d, "if get(obj, %s) ~= %s then suspended = false end\n", strings.Join(quoted, ", "), w.value)
	}
	d.WriteString("local actions = {}\n")
	d.WriteString("actions[\"suspend\"] = {[\"disabled\"] = suspended, [\"iconClass\"] = \"fa fa-fw fa-pause-circle\", [\"displayName\"] = \"Suspend\"}\n")
	d.WriteString("actions[\"resume\"] = {[\"disabled\"] = not suspended, [\"iconClass\"] = \"fa fa-fw fa-play-circle\", [\"displayName\"] = \"Resume\"}\n")
	d.WriteString("return actions\n")
	ex.Scripts["actions/discovery.lua"] = d.String()
	return nil
}

// luaLiteral writes a JSON value as a Lua expression (objects and arrays
// as table constructors; null as nil).
func luaLiteral(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "nil", nil
	case bool:
		return strconv.FormatBool(x), nil
	case string:
		return luaString(x), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int:
		return strconv.Itoa(x), nil
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			s, err := luaLiteral(e)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return "{" + strings.Join(parts, ", ") + "}", nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, len(x))
		for _, k := range keys {
			s, err := luaLiteral(x[k])
			if err != nil {
				return "", err
			}
			parts = append(parts, "["+luaString(k)+"] = "+s)
		}
		return "{" + strings.Join(parts, ", ") + "}", nil
	}
	if n, ok := numberLiteral(v); ok {
		return n, nil
	}
	return "", fmt.Errorf("a %T value cannot be written in Lua", v)
}

// numberLiteral writes a json.Number or other number type.
func numberLiteral(v any) (string, bool) {
	if s, ok := v.(fmt.Stringer); ok {
		if _, err := strconv.ParseFloat(s.String(), 64); err == nil {
			return s.String(), true
		}
	}
	return "", false
}

// bracketChain reads a chain of fields some of which are written
// ["name"], the form gojq parses as an index by a constant string
// (fieldChain reads .a.b and ."c").
func bracketChain(q *gojq.Query) ([]string, bool) {
	if q == nil || q.Term == nil || q.Left != nil || q.Right != nil || q.Term.Type != gojq.TermTypeIndex {
		return nil, false
	}
	var fields []string
	add := func(ix *gojq.Index) bool {
		switch {
		case ix == nil || ix.IsSlice || ix.End != nil:
			return false
		case ix.Name != "":
			fields = append(fields, ix.Name)
		case ix.Str != nil && len(ix.Str.Queries) == 0:
			fields = append(fields, ix.Str.Str)
		case ix.Start != nil && ix.Start.Left == nil && ix.Start.Right == nil && ix.Start.Term != nil &&
			ix.Start.Term.Type == gojq.TermTypeString && ix.Start.Term.Str != nil &&
			len(ix.Start.Term.Str.Queries) == 0 && len(ix.Start.Term.SuffixList) == 0:
			fields = append(fields, ix.Start.Term.Str.Str)
		default:
			return false
		}
		return true
	}
	if !add(q.Term.Index) {
		return nil, false
	}
	for _, sf := range q.Term.SuffixList {
		if sf.Iter || sf.Optional || !add(sf.Index) {
			return nil, false
		}
	}
	return fields, true
}
