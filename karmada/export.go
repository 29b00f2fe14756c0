package karmada

import (
	"fmt"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/internal/jqexpr"
	"github.com/kartalua/karta/internal/jqlua"
	"github.com/kartalua/karta/internal/luaexport"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// Export renders a Karta's Program as a ResourceInterpreterCustomization
// (config.karmada.io/v1alpha1) for Karmada's own runtime: metadata.name
// karta-<name>, spec.target the root's kind, and one rule per Karmada hook
// the Karta generates:
// replicaResource (one pod-bearing component), componentResource and
// dependencyInterpretation (some pod-bearing component), replicaRevision
// (when ReviseReplica is defined), statusReflection, healthInterpretation
// and statusAggregation (always), retention (only from an override).
//
// Every luaScript is a self-contained chunk: a small pure-Lua jq runtime
// for the exported subset (internal/luaexport), the Karta's paths
// translated into it (paths that share a prefix carry its accessor once:
// luaexport's pipe.go), the pod-bearing components as tables that one
// units function reads (export_units.go), the hooks, then the override
// chunks — each rule's only as far as its function reaches (luaexport's
// Chunk): the status rules carry no pod-spec paths, the component rules no
// status, and statusReflection no runtime at all. It uses only
// Karmada's sandbox and its kube module: no karta, jq, gsub or rep. A
// fragmented pod spec definition is exported by building its
// PodTemplateSpec view in Lua. An expression outside the
// subset, or an override that uses karta or replaces a non-Karmada hook,
// fails the export with an *interpreter.ExportError naming it. A nil p
// fails with interpreter.ErrNoProgram.
func Export(p *interpreter.Program) ([]byte, error) {
	if p == nil {
		return nil, fmt.Errorf("karmada export: %w", interpreter.ErrNoProgram)
	}
	e := luaexport.New(p, "Karmada", luaexport.CompiledPerCall)
	in := e.In
	chunks, err := exportLua(e)
	if err != nil {
		return nil, err
	}
	customizations := map[string]any{}
	for r, chunk := range chunks {
		customizations[r] = map[string]any{"luaScript": chunk}
	}
	doc := map[string]any{
		"apiVersion": CustomizationAPIVersion,
		"kind":       CustomizationKind,
		"metadata":   map[string]any{"name": "karta-" + in.Name()},
		"spec": map[string]any{
			"target": map[string]any{
				"apiVersion": in.GVK().GroupVersion().String(),
				"kind":       in.GVK().Kind,
			},
			"customizations": customizations,
		},
	}
	return yaml.Marshal(doc)
}

// dependencyList is the Lua list of the tables GetDependencies reads
// (dependencyVar).
func dependencyList(cs []*interpreter.ComponentShape) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = dependencyVar(c)
	}
	return strings.Join(names, ", ")
}

// ruleHook is the function Karmada calls for a rule (the customizations
// field): GetReplicas for replicaResource, and so on.
func ruleHook(field string) string {
	for _, op := range Operations {
		if op.Field() == field {
			return op.Hook()
		}
	}
	return ""
}

// exportLua returns each rule's chunk: the whole export shaken to the
// function the rule calls, with the override chunks, whole, and what they
// name.
func exportLua(e *luaexport.Exporter) (map[string]string, error) {
	bearing := podBearing(e.Model)
	// The pod-bearing components: units, then each component's table.
	if len(bearing) > 0 {
		e.W("%s", unitsLua)
	}
	nodes := map[string]string{}
	var dependent []*interpreter.ComponentShape
	for _, c := range bearing {
		if err := componentTable(e, c, nodes); err != nil {
			return nil, err
		}
		if c.NamesDependencies() {
			if err := dependencyTable(e, c, nodes); err != nil {
				return nil, err
			}
			dependent = append(dependent, c)
		}
	}
	if err := e.Status(); err != nil {
		return nil, err
	}
	var rules []string
	if c, _ := replicaResource(e.Model); c != nil {
		e.W("function GetReplicas(obj)\n")
		scale := scaleVar(c)
		if scale == "" {
			scale = "nil"
		}
		e.W("  local u = units(obj, %s, %s)\n", componentVar(c), scale)
		e.W("  if #u ~= 1 then error(\"GetReplicas: component %s has \" .. #u .. \" present instances, not one\") end\n", luaexport.Escape(c.Name))
		e.W("  return u[1].replicas, kube.accuratePodRequirements(u[1].view)\n")
		e.W("end\n\n")
		rules = append(rules, "replicaResource")
	}
	if len(bearing) > 0 {
		e.W("function GetComponents(obj)\n  local out, seen = {}, {}\n")
		e.W("  for _, cs in ipairs({%s}) do\n", scaledList(bearing))
		e.W("    local c = cs[1]\n")
		e.W("    for _, u in ipairs(units(obj, c, cs[2])) do\n")
		e.W("      local name = u.id\n")
		e.W("      if c.ids == nil then name = c.name end\n")
		e.W("      if string.len(name) > %d then error(\"GetComponents: the component name \" .. name .. \" is longer than %d characters\") end\n", maxComponentName, maxComponentName)
		e.W("      if seen[name] then error(\"GetComponents: the component name \" .. name .. \" is already used\") end\n")
		e.W("      seen[name] = true\n")
		e.W("      out[#out+1] = {name = name, replicas = u.replicas, replicaRequirements = kube.accuratePodRequirements(u.view)}\n")
		e.W("    end\n  end\n")
		e.W("  return out\nend\n\n")
		rules = append(rules, "componentResource")
	}
	if c := e.Model.ReplicaComponent; c != nil {
		if err := reviseReplica(e, c); err != nil {
			return nil, err
		}
		rules = append(rules, "replicaRevision")
	}
	e.W(`function ReflectStatus(obj)
  if type(obj.status) == "table" and obj.status[1] == nil then return obj.status end
  return {}
end

function InterpretHealth(obj)
  local s = statusOf(obj)
  return s == "Running" or s == "Completed"
end

function AggregateStatus(desired, statusItems)
  local best, bestRank
  for _, it in ipairs(statusItems or {}) do
    if it.applied == true and type(it.status) == "table" then
      local member = {}
      for k, v in pairs(desired) do member[k] = v end
      member.status = it.status
      local r = RANK[statusOf(member)]
      if best == nil or r < bestRank then best, bestRank = it.status, r end
    end
  end
  if best ~= nil then desired.status = best end
  return desired
end

`)
	rules = append(rules, "statusReflection", "healthInterpretation", "statusAggregation")
	if len(bearing) > 0 {
		e.W("function GetDependencies(obj)\n  local ns = nil\n")
		e.W("  if type(obj.metadata) == \"table\" then ns = obj.metadata.namespace end\n")
		e.W("  local out, seen = {}, {}\n")
		e.W("  for _, c in ipairs({%s}) do\n", dependencyList(dependent))
		e.W("    for _, u in ipairs(views(obj, c)) do\n")
		e.W("      for _, d in ipairs(kube.getPodDependencies(u.view, ns) or {}) do\n")
		e.W("        local key = depKey(d)\n")
		e.W("        if not seen[key] then seen[key] = true; out[#out+1] = d end\n")
		e.W("      end\n    end\n  end\n")
		e.W("  table.sort(out, function(a, b) return depKey(a) < depKey(b) end)\n  return out\nend\n")
		rules = append(rules, "dependencyInterpretation")
	}
	overrides, retain, err := exportOverrides(e)
	if err != nil {
		return nil, err
	}
	if retain {
		rules = append([]string{"retention"}, rules...)
	}
	overrideNames := jqlua.ChunkNames(overrides)
	chunks := make(map[string]string, len(rules))
	for _, r := range rules {
		fn := ruleHook(r)
		header := "-- Generated by karta from Karta " + luaexport.Escape(e.In.Name()) + ": " + fn + " for Karmada's runtime, self-contained.\n"
		chunks[r] = e.Chunk(header, "local kube = require(\"kube\")\n", append([]string{fn}, overrideNames...)...) + overrides
	}
	return chunks, nil
}

// reviseReplica emits ReviseReplica(obj, n) for a replicasPath that is a
// chain of fields, perhaps with a default (it must be assignable); a component with
// instances must have exactly one.
func reviseReplica(e *luaexport.Exporter, c *interpreter.ComponentShape) error {
	a, err := e.Analysis(c.ReplicasPath)
	if err != nil {
		return e.Fail(fmt.Sprintf("component %q: replicasPath", c.Name), c.ReplicasPath, err)
	}
	// A default (.spec.replicas // 1) is written through its field.
	fields, ok := luaexport.FieldChain(jqexpr.WritePath(a.Query))
	if !ok {
		return e.Fail(fmt.Sprintf("component %q: replicasPath", c.Name), c.ReplicasPath,
			fmt.Errorf("ReviseReplica exports only a chain of fields (.a.b.c)"))
	}
	e.W("function ReviseReplica(obj, n)\n")
	e.W("  if n < 0 or n > %d then error(\"ReviseReplica: \" .. n .. \" is out of range\") end\n", e.Model.MaxReplicas)
	if c.Index > 0 && c.InstanceIDPath != "" {
		f, err := e.Expr(fmt.Sprintf("component %q: instanceIdPath", c.Name), c.InstanceIDPath, "obj")
		if err != nil {
			return err
		}
		e.W("  local ids = instanceIDs(%s, %s)\n", f, jqlua.LuaString(c.Name))
		e.W("  if #ids ~= 1 then error(%s .. #ids .. \" instances, not one\") end\n", jqlua.LuaString(fmt.Sprintf("ReviseReplica: component %s has ", c.Name)))
	}
	e.W("  local t = obj\n")
	for _, f := range fields[:len(fields)-1] {
		// The refusal words the value as the exports' jq errors do (gojq's
		// message with the value's kind alone, docs/jq.md), so it ends as the
		// in-process refusal of the same object does.
		e.W("  if t[%[1]s] == nil then t[%[1]s] = {} elseif type(t[%[1]s]) ~= \"table\" or t[%[1]s][1] ~= nil then error(\"ReviseReplica: cannot index \" .. %[1]s .. \": expected an object but got: \" .. (type(t[%[1]s]) == \"table\" and \"array\" or type(t[%[1]s]))) end\n  t = t[%[1]s]\n", jqlua.LuaString(f))
	}
	e.W("  t[%s] = n\n  return obj\nend\n\n", jqlua.LuaString(fields[len(fields)-1]))
	return nil
}

// karmadaHooks are the hooks Karmada calls, which an exported override may
// define.
var karmadaHooks = map[string]bool{
	string(interpreter.HookGetReplicas): true, string(interpreter.HookGetComponents): true, string(interpreter.HookReviseReplica): true,
	string(interpreter.HookRetain): true, string(interpreter.HookAggregateStatus): true, string(interpreter.HookReflectStatus): true,
	string(interpreter.HookInterpretHealth): true, string(interpreter.HookGetDependencies): true,
}

var kartaRef = regexp.MustCompile(`\b(karta|jq)\b`)

// unreadByKarmada are the hooks no Karmada operation reads: an override
// that defines only these (a GetPodSpecs adding the containers an operator
// injects) changes nothing Karmada
// runs, so the export leaves it out rather than refuse the Karta.
var unreadByKarmada = map[string]bool{
	string(interpreter.HookGetPodSpecs): true, string(interpreter.HookGetGangGroups): true,
}

// unreadOverride reports whether every global an override defines is a
// hook no Karmada operation reads.
func unreadOverride(globals []string) bool {
	for _, g := range globals {
		if !unreadByKarmada[g] {
			return false
		}
	}
	return len(globals) > 0
}

// exportOverrides returns the override chunks to append and whether one
// defines Retain. An override must define only Karmada hooks and must not
// use karta or jq, and an Argo CD health script cannot be exported; one
// that defines only hooks Karmada never reads is left out.
func exportOverrides(e *luaexport.Exporter) (string, bool, error) {
	var b strings.Builder
	retain := false
	for _, o := range e.In.Scripts() {
		if o.Argo {
			return "", false, e.Refuse("%s: an Argo CD health script is not exported", o.Chunk)
		}
		if unreadOverride(o.Globals) {
			continue
		}
		if m := kartaRef.FindString(o.Source); m != "" {
			return "", false, e.Refuse("%s uses %s, which Karmada's runtime does not have", o.Chunk, m)
		}
		for _, g := range o.Globals {
			if interpreter.IsHook(g) && !karmadaHooks[g] {
				return "", false, e.Refuse("%s overrides %s, which the export cannot carry", o.Chunk, g)
			}
			if g == string(interpreter.HookRetain) {
				retain = true
			}
		}
		fmt.Fprintf(&b, "\n-- override: %s\n%s", luaexport.Escape(o.Chunk), o.Source)
		if !strings.HasSuffix(o.Source, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String(), retain, nil
}

// ExportCheck is a karta.ValidateOptions.CheckExpr that reports an
// expression the Karmada export cannot carry, and why: the same
// translation the export runs. An expression that reads a reference is
// refused here; ExportCheckFor checks it as the export of its Karta
// carries it.
func ExportCheck(e karta.Expr) string {
	return ExportCheckFor(nil)(e)
}

// ExportCheckFor is ExportCheck for the expressions of k, whose
// references' exportFallbacks the export binds (k may be nil).
func ExportCheckFor(k *karta.Karta) func(e karta.Expr) string {
	var refs []karta.Reference
	if k != nil {
		refs = k.Spec.References
	}
	return func(e karta.Expr) string {
		a := jqexpr.Of(e)
		if a == nil {
			return ""
		}
		if err := luaexport.Check(a, refs, "Karmada"); err != nil {
			return fmt.Sprintf("cannot be exported to Karmada: jq %q: %v", a.Text, err)
		}
		return ""
	}
}
