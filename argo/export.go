package argo

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/kartalua/karta/internal/argohealth"
	"github.com/kartalua/karta/internal/jqlua"
	"github.com/kartalua/karta/internal/luaexport"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// The Argo CD export: a Karta's status as an Argo CD health.lua, and its
// suspendDefinition as suspend and resume actions. It is written with
// internal/luaexport, as Karmada's export is — the jq translator onto
// jqlua's portable runtime and the Karta's generic status (statusOf) —
// so the status an exported script computes is the one Karmada's export
// computes, and the jq semantics are written once (jqlua).

// HealthWords maps karta's generic statuses to Argo CD's health words:
// the one table both the export and its tests read. A batch kind (one that
// runs to completion: its Karta maps a Completed status) that is Running
// is Progressing — it has work left — and a serving kind that is Running
// is Healthy. Undefined has no word: the script returns nil, Argo CD's "no
// assessment".
func HealthWords(batch bool) map[karta.Status]string {
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

// IsBatch reports whether a Karta describes a batch kind: its root
// component maps a Completed status. A nil Karta, or one without a root
// component, is not.
func IsBatch(k *karta.Karta) bool {
	if k == nil || k.Spec.StructureDefinition.RootComponent == nil {
		return false
	}
	sd := k.Spec.StructureDefinition.RootComponent.StatusDefinition
	return sd != nil && len(sd.StatusMappings.Completed) > 0
}

// HealthMessage is the message the exported health script gives, from
// the workload's conditions: the message of the last condition whose
// status is "True" and whose message is not empty, else of the last
// condition with a message, else "".
func HealthMessage(conds []interpreter.Condition) string {
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

// Export is a Karta as an Argo CD resource customization: the scripts
// of its <group>/<Kind> folder, by path relative to that folder.
type Export struct {
	// Group and Kind name the folder: <Group>/<Kind>, or <Kind> for the
	// core group.
	Group, Kind string
	// Scripts are health.lua, and with a suspendDefinition
	// actions/discovery.lua, actions/suspend/action.lua and
	// actions/resume/action.lua.
	Scripts map[string]string
}

// ExportProgram renders a Karta's Program as an Argo CD resource customization. The
// health script is self-contained: jqlua's portable runtime (pure Lua, Lua
// 5.1's base, string, table and math libraries — what Argo CD gives its
// built-in scripts, and an argocd-cm script with useOpenLibs), the Karta's
// jq expressions translated onto it, the generic status of the Karta, then
// its Argo CD word (HealthWords) with a message from the conditions
// (HealthMessage). A Karta whose InterpretStatus, Suspend or Resume a
// script overrides, or
// with a jq expression only gojq can run, fails with an
// *interpreter.ExportError; a nil p with interpreter.ErrNoProgram.
func ExportProgram(p *interpreter.Program) (*Export, error) {
	if p == nil {
		return nil, fmt.Errorf("argo export: %w", interpreter.ErrNoProgram)
	}
	e := luaexport.New(p, "Argo CD", luaexport.CompiledOnce)
	for _, o := range e.In.Scripts() {
		for _, g := range o.Globals {
			// The export translates the Karta's paths: a hook written in
			// Lua is not carried, and exporting without it would give
			// Argo CD another health or action than karta computes.
			switch interpreter.Hook(g) {
			case interpreter.HookInterpretStatus, interpreter.HookSuspend, interpreter.HookResume:
				return nil, e.Refuse("%s overrides %s, which the Argo CD export cannot carry", o.Chunk, g)
			}
		}
		if o.Argo {
			return nil, e.Refuse("%s: an Argo CD health script is not exported", o.Chunk)
		}
	}
	health, err := healthLua(e)
	if err != nil {
		return nil, err
	}
	gvk := e.In.GVK()
	ex := &Export{Group: gvk.Group, Kind: gvk.Kind, Scripts: map[string]string{"health.lua": health}}
	if err := suspendActions(e, ex); err != nil {
		return nil, err
	}
	return ex, nil
}

// healthLua is health.lua: statusOf, then its Argo CD word and message.
func healthLua(e *luaexport.Exporter) (string, error) {
	if err := e.Status(); err != nil {
		return "", err
	}
	conds := ""
	k := e.In.Karta()
	sd := k.Spec.StructureDefinition.RootComponent.StatusDefinition
	var cd *karta.ConditionsDefinition
	if sd != nil && sd.ConditionsDefinition != nil && sd.ConditionsDefinition.Path != "" {
		cd = sd.ConditionsDefinition
		f, err := e.Expr("conditionsDefinition.path", cd.Path, "obj")
		if err != nil {
			return "", err
		}
		conds = f
	}
	// The message is part of the chunk's body, so that the helpers it names
	// are kept (luaexport's Chunk walks the chunk).
	e.W("%s", "-- The message: the last condition with status True and a message, else the last\n-- condition with a message.\nlocal function message(obj)\n")
	if conds == "" {
		e.W("%s", "  return \"\"\nend\n\n")
	} else {
		// NULL is an empty table: no conditions.
		e.W(`  local last, lastTrue = "", ""
  for _, arr in ipairs(%s) do
    for _, c in ipairs(type(arr) == "table" and arr or {}) do
      local ty, m = c[%s], c[%s]
      if type(ty) == "string" and ty ~= "" and type(m) == "string" and m ~= "" then
        last = m
        if c[%s] == "True" then lastTrue = m end
      end
    end
  end
  return lastTrue ~= "" and lastTrue or last
end

`, conds, jqlua.LuaString(cd.TypeFieldName), jqlua.LuaString(cd.MessageFieldName), jqlua.LuaString(cd.StatusFieldName))
	}
	var header strings.Builder
	fmt.Fprintf(&header, "-- Generated by karta from Karta %s: the Argo CD health of %s.\n", luaexport.Escape(e.In.Name()), luaexport.Escape(e.In.GVK().String()))
	header.WriteString("-- Self-contained: Lua 5.1's base, string, table and math (in argocd-cm: useOpenLibs).\n")

	words := HealthWords(IsBatch(k))
	// The statuses of each word, the words in their order, each status's
	// in its.
	byWord := map[string][]string{}
	for s, w := range words {
		byWord[w] = append(byWord[w], string(s))
	}
	wordList := make([]string, 0, len(byWord))
	for w := range byWord {
		wordList = append(wordList, w)
		sort.Strings(byWord[w])
	}
	sort.Strings(wordList)
	kindWord := "serving"
	if IsBatch(k) {
		kindWord = "batch"
	}
	// A chain of comparisons rather than a table: a table with string
	// keys costs gopher-lua a hash map and a key list on every run. One
	// branch a word, the statuses that map to it compared in it.
	// The script's own work is part of the chunk's body, so that the
	// walk over the chunk (luaexport's Chunk) keeps what it names.
	e.W("-- karta's generic status to Argo CD's health (a %s kind); Undefined has none.\n", kindWord)
	e.W("%s", "local status, word = statusOf(obj), nil\n")
	for i, w := range wordList {
		kw := "elseif"
		if i == 0 {
			kw = "if"
		}
		tests := make([]string, len(byWord[w]))
		for j, s := range byWord[w] {
			tests[j] = "status == " + jqlua.LuaString(s)
		}
		e.W("%s %s then word = %s\n", kw, strings.Join(tests, " or "), jqlua.LuaString(w))
	}
	e.W("%s", `end
if word == nil then return nil end
return {status = word, message = message(obj)}
`)
	return e.Chunk(header.String(), ""), nil
}

// suspendActions adds the suspend and resume actions of the root
// component's suspendDefinition, whose paths must be chains of fields.
func suspendActions(e *luaexport.Exporter, ex *Export) error {
	k := e.In.Karta()
	root := k.Spec.StructureDefinition.RootComponent
	for _, c := range k.Spec.StructureDefinition.ChildComponents {
		if c.SuspendDefinition != nil {
			return e.Refuse("component %q: the Argo CD export carries the root component's suspendDefinition only", c.Name)
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
			an, err := e.Analysis(a.Path)
			if err != nil {
				return nil, e.Fail(where, a.Path, err)
			}
			fields, ok := luaexport.FieldChain(an.Query)
			if !ok {
				return nil, e.Fail(where, a.Path, errors.New("the Argo CD export carries only a chain of fields (.a.b[\"c\"])"))
			}
			v, err := a.DecodedValue()
			if err != nil {
				return nil, e.Refuse("%s: %v", where, err)
			}
			lit, err := luaexport.Literal(v)
			if err != nil {
				return nil, e.Refuse("%s: %v", where, err)
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
	header := fmt.Sprintf("-- Generated by karta from Karta %s: ", luaexport.Escape(e.In.Name()))
	action := func(what string, ws []write) string {
		var b strings.Builder
		fmt.Fprintf(&b, "%s%s %s as its suspendDefinition says.\n", header, what, luaexport.Escape(e.In.GVK().Kind))
		for _, w := range ws {
			b.WriteString("do\n  local t = obj\n")
			for _, f := range w.fields[:len(w.fields)-1] {
				fmt.Fprintf(&b, "  if type(t[%[1]s]) ~= \"table\" then t[%[1]s] = {} end\n  t = t[%[1]s]\n", jqlua.LuaString(f))
			}
			fmt.Fprintf(&b, "  t[%s] = %s\nend\n", jqlua.LuaString(w.fields[len(w.fields)-1]), w.value)
		}
		b.WriteString("return obj\n")
		return b.String()
	}
	ex.Scripts["actions/suspend/action.lua"] = action("suspends", suspend)
	ex.Scripts["actions/resume/action.lua"] = action("resumes", resume)

	var d strings.Builder
	fmt.Fprintf(&d, "%sthe actions of %s.\n", header, luaexport.Escape(e.In.GVK().Kind))
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
			quoted[i] = jqlua.LuaString(f)
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
