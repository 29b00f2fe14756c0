package interpreter

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kartalua/karta/internal/third_party/gojq"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/internal/jqlua"
	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/karta"
)

// ExportKarmada renders the Program as a ResourceInterpreterCustomization
// (config.karmada.io/v1alpha1) for Karmada's own runtime: metadata.name
// karta-<name>, spec.target the root's kind, and one rule per Karmada hook
// the Karta generates:
// replicaResource (one pod-bearing component), componentResource and
// dependencyInterpretation (some pod-bearing component), replicaRevision
// (when ReviseReplica is defined), statusReflection, healthInterpretation
// and statusAggregation (always), retention (only from an override).
//
// Every luaScript is the same self-contained chunk: a small pure-Lua jq
// runtime for the exported subset (see export_jq.go), the Karta's paths
// translated into it, the hooks, then the override chunks. It uses only
// Karmada's sandbox and its kube module: no karta, jq, gsub or rep. A
// fragmented pod spec definition is exported by building its
// PodTemplateSpec view in Lua. An expression outside the
// subset, or an override that uses karta or replaces a non-Karmada hook,
// fails the export with an *ExportError naming it.
func (p *Program) ExportKarmada() ([]byte, error) {
	chunk, rules, err := p.exportLua()
	if err != nil {
		return nil, err
	}
	customizations := map[string]any{}
	for _, r := range rules {
		customizations[r] = map[string]any{"luaScript": chunk}
	}
	doc := map[string]any{
		"apiVersion": karmada.CustomizationAPIVersion,
		"kind":       karmada.CustomizationKind,
		"metadata":   map[string]any{"name": "karta-" + p.name},
		"spec": map[string]any{
			"target": map[string]any{
				"apiVersion": p.gvk.GroupVersion().String(),
				"kind":       p.gvk.Kind,
			},
			"customizations": customizations,
		},
	}
	return yaml.Marshal(doc)
}

// exporter builds the exported chunk.
type exporter struct {
	p *Program
	// u translates the Karta's jq expressions with jqlua's translator, for
	// its portable runtime: the accessors run unchanged in Karmada.
	u     *jqlua.Unit
	exprs []exportedExpr // E[i]
	b     strings.Builder
}

// exportedExpr is E[i]: the accessor of one expression of a field.
type exportedExpr struct{ ref, field string }

func (e *exporter) fail(field, expr string, err error) error {
	return &ExportError{Karta: e.p.name, Field: field, Expr: expr, Reason: err.Error()}
}

// expr translates a jq path and returns the Lua name of its function of
// the input list {W(obj)}, which returns the list of outputs (NULL for
// null) or raises the jq error naming the field.
func (e *exporter) expr(field, expr string) (string, error) {
	a, err := e.p.model.exprs.analysis(expr)
	if err != nil {
		return "", e.fail(field, expr, err)
	}
	ref, err := e.u.AddQuery(a.Text, a.Query)
	if err != nil {
		return "", e.fail(field, expr, err)
	}
	e.exprs = append(e.exprs, exportedExpr{ref: ref, field: field})
	return fmt.Sprintf("E[%d]", len(e.exprs)), nil
}

func (e *exporter) w(format string, args ...any) { fmt.Fprintf(&e.b, format, args...) }

// exportLua returns the chunk and the rules it serves, in Karmada's field
// order.
func (p *Program) exportLua() (string, []string, error) {
	e := &exporter{p: p, u: jqlua.NewPortableUnit()}
	var bearing []*compModel
	for _, c := range p.model.comps {
		if c.podBearing() {
			bearing = append(bearing, c)
		}
	}
	var body strings.Builder
	e.b = strings.Builder{}
	// Per-component units.
	for _, c := range bearing {
		if err := e.units(c); err != nil {
			return "", nil, err
		}
	}
	if err := e.status(); err != nil {
		return "", nil, err
	}
	var rules []string
	if len(bearing) == 1 {
		e.w("function GetReplicas(obj)\n")
		e.w("  local u = units_%d(obj, true)\n", bearing[0].index)
		e.w("  if #u ~= 1 then error(\"GetReplicas: component %s has \" .. #u .. \" present instances, not one\") end\n", luaEscape(bearing[0].c.Name))
		e.w("  return u[1].replicas, kube.accuratePodRequirements(u[1].view)\n")
		e.w("end\n\n")
		rules = append(rules, "replicaResource")
	}
	if len(bearing) > 0 {
		e.w("function GetComponents(obj)\n  local out, seen = {}, {}\n")
		for _, c := range bearing {
			e.w("  for _, u in ipairs(units_%d(obj, true)) do\n", c.index)
			if c.ids != nil {
				e.w("    local name = u.id\n")
			} else {
				e.w("    local name = %s\n", luaString(c.c.Name))
			}
			e.w("    if string.len(name) > %d then error(\"GetComponents: the component name \" .. name .. \" is longer than %d characters\") end\n", maxComponentName, maxComponentName)
			e.w("    if seen[name] then error(\"GetComponents: the component name \" .. name .. \" is already used\") end\n")
			e.w("    seen[name] = true\n")
			e.w("    out[#out+1] = {name = name, replicas = u.replicas, replicaRequirements = kube.accuratePodRequirements(u.view)}\n")
			e.w("  end\n")
		}
		e.w("  return out\nend\n\n")
		rules = append(rules, "componentResource")
	}
	if c, err := p.model.replicaComponent(); err == nil {
		if err := e.reviseReplica(c); err != nil {
			return "", nil, err
		}
		rules = append(rules, "replicaRevision")
	}
	e.w(`function ReflectStatus(obj)
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
		e.w("function GetDependencies(obj)\n  local ns = nil\n")
		e.w("  if type(obj.metadata) == \"table\" then ns = obj.metadata.namespace end\n")
		e.w("  local out, seen = {}, {}\n")
		for _, c := range bearing {
			e.w("  for _, u in ipairs(units_%d(obj, false)) do\n", c.index)
			e.w("    for _, d in ipairs(kube.getPodDependencies(u.view, ns) or {}) do\n")
			e.w("      local key = depKey(d)\n")
			e.w("      if not seen[key] then seen[key] = true; out[#out+1] = d end\n")
			e.w("    end\n  end\n")
		}
		e.w("  table.sort(out, function(a, b) return depKey(a) < depKey(b) end)\n  return out\nend\n")
		rules = append(rules, "dependencyInterpretation")
	}
	overrides, retain, err := p.exportOverrides()
	if err != nil {
		return "", nil, err
	}
	if retain {
		rules = append([]string{"retention"}, rules...)
	}

	body.WriteString("-- Generated by karta from Karta " + luaEscape(p.name) + ": self-contained Lua for Karmada's runtime.\n")
	body.WriteString("-- The jq runtime (jqlua's portable runtime), then the Karta's jq expressions.\n")
	body.WriteString(jqlua.PortablePrelude)
	body.WriteString("\n")
	body.WriteString(e.u.Lua())
	body.WriteString("\n")
	body.WriteString(exportPrelude)
	body.WriteString("local E = {}\n")
	for i, x := range e.exprs {
		fmt.Fprintf(&body, "E[%d] = function(ins) return run(%s, ins[1], %s) end\n", i+1, x.ref, luaString(x.field))
	}
	body.WriteString("\n")
	body.WriteString(e.b.String())
	body.WriteString(overrides)
	return body.String(), rules, nil
}

// units emits units_<index>(obj, scaled): the present instances of c as
// {id, replicas, view}, replicas including the scaled ancestors',
// computed only when scaled.
func (e *exporter) units(c *compModel) error {
	name := c.c.Name
	ids := func(cm *compModel) (string, error) {
		if cm.ids == nil {
			return "{\"\"}", nil
		}
		f, err := e.expr(fmt.Sprintf("component %q: instanceIdPath", cm.c.Name), cm.c.InstanceIDPath)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("instanceIDs(%s({W(obj)}), %s)", f, luaString(cm.c.Name)), nil
	}
	e.w("function units_%d(obj, scaled)\n  local factor = 1\n", c.index)
	e.w("  if scaled then\n")
	for a := c.parent; a != nil; a = a.parent {
		sp := a.scale
		if sp == nil || sp.replicas == nil {
			continue
		}
		aids, err := ids(a)
		if err != nil {
			return err
		}
		rf, err := e.expr(fmt.Sprintf("component %q: replicasPath", a.c.Name), sp.replicas.expr)
		if err != nil {
			return err
		}
		e.w("    do\n      local ids = %s\n", aids)
		e.w("      local r = zip(%s({W(obj)}), ids, %s)\n", rf, luaString(a.c.Name+": replicasPath"))
		e.w("      if #ids ~= 1 then error(%s .. #ids .. \" instances, not one\") end\n", luaString(fmt.Sprintf("component %s: its scaled ancestor %s has ", name, a.c.Name)))
		e.w("      local n = scaleValue(r[1], %s)\n", luaString(a.c.Name+": replicasPath"))
		e.w("      if n ~= nil then factor = factor * n end\n    end\n")
	}
	e.w("  end\n")
	cids, err := ids(c)
	if err != nil {
		return err
	}
	e.w("  local ids = %s\n", cids)
	if c.style == karta.SpecStyleFragmented {
		return e.fragmentedUnits(c)
	}
	sf, err := e.expr(fmt.Sprintf("component %q: %s", name, c.spec.field), c.spec.expr)
	if err != nil {
		return err
	}
	e.w("  local specs = zip(%s({W(obj)}), ids, %s)\n", sf, luaString(name+": "+c.spec.field))
	if c.meta != nil {
		mf, err := e.expr(fmt.Sprintf("component %q: metadataPath", name), c.meta.expr)
		if err != nil {
			return err
		}
		e.w("  local metas = zip(%s({W(obj)}), ids, %s)\n", mf, luaString(name+": metadataPath"))
	}
	e.w("  local reps\n")
	if sp := c.scale; sp != nil && sp.replicas != nil {
		rf, err := e.expr(fmt.Sprintf("component %q: replicasPath", name), sp.replicas.expr)
		if err != nil {
			return err
		}
		e.w("  if scaled then reps = zip(%s({W(obj)}), ids, %s) end\n", rf, luaString(name+": replicasPath"))
	}
	e.w("  local out = {}\n  for i, id in ipairs(ids) do\n    local s = specs[i]\n    if s ~= NULL then\n")
	e.w("      if JX.kind(s) ~= \"object\" then error(%s .. id .. \": not an object\") end\n", luaString(fmt.Sprintf("component %s: %s of instance ", name, c.spec.field)))
	if c.style == karta.SpecStylePodTemplateSpec {
		e.w("      local view = JX.plain(s)\n")
	} else {
		e.w("      local view = {spec = JX.plain(s)}\n")
		if c.meta != nil {
			e.w("      if metas[i] ~= NULL then\n")
			e.w("        if JX.kind(metas[i]) ~= \"object\" then error(%s .. id .. \": not an object\") end\n", luaString(fmt.Sprintf("component %s: metadataPath of instance ", name)))
			e.w("        view.metadata = JX.plain(metas[i])\n      end\n")
		}
	}
	e.w("      local n = 1\n")
	e.w("      if reps ~= nil then local v = scaleValue(reps[i], %s); if v ~= nil then n = v end end\n", luaString(name+": replicasPath"))
	e.w("      out[#out+1] = {id = id, replicas = n * factor, view = view}\n")
	e.w("    end\n  end\n  return out\nend\n\n")
	return nil
}

// status emits statusOf(obj), the generic status InterpretStatus gives, and
// RANK.
func (e *exporter) status() error {
	sd := e.p.karta.Spec.StructureDefinition.RootComponent.StatusDefinition
	e.w("function statusOf(obj)\n  local phase = nil\n")
	if sd != nil && sd.PhaseDefinition != nil && sd.PhaseDefinition.Path != "" {
		f, err := e.expr("phaseDefinition.path", sd.PhaseDefinition.Path)
		if err != nil {
			return err
		}
		e.w("  local po = %s({W(obj)})\n", f)
		e.w("  if po[1] ~= nil and po[1] ~= NULL then\n")
		e.w("    if type(po[1]) ~= \"string\" then error(\"InterpretStatus: the phase is not a string\") end\n")
		e.w("    phase = po[1]\n  end\n")
	}
	e.w("  local conds = {}\n")
	if sd != nil && sd.ConditionsDefinition != nil && sd.ConditionsDefinition.Path != "" {
		cd := sd.ConditionsDefinition
		f, err := e.expr("conditionsDefinition.path", cd.Path)
		if err != nil {
			return err
		}
		e.w("  conds = conditionsOf(%s({W(obj)}), %s, %s, %s, %s)\n", f,
			luaString(cd.TypeFieldName), luaString(cd.StatusFieldName), luaString(cd.ReasonFieldName), luaString(cd.MessageFieldName))
	}
	e.w("  local matched = {}\n")
	var mappings []karta.StatusMapping
	if sd != nil {
		mappings = sd.StatusMappings.InPrecedence()
	}
	for _, m := range mappings {
		if len(m.Matchers) == 0 {
			continue
		}
		var any []string
		for i, mt := range m.Matchers {
			var all []string
			if mt.ByPhase != "" {
				all = append(all, fmt.Sprintf("(phase ~= nil and phase == %s)", luaString(mt.ByPhase)))
			}
			for _, c := range mt.ByConditions {
				all = append(all, fmt.Sprintf("condition(conds, %s, %s, %s)", luaString(c.Type), luaString(c.Status), luaString(c.Reason)))
			}
			if x := mt.ByExpression; x != nil {
				f, err := e.expr(fmt.Sprintf("statusMappings.%s[%d].byExpression.expression", m.Key, i), x.Expression)
				if err != nil {
					return err
				}
				all = append(all, fmt.Sprintf("expression(%s({W(obj)}), %s)", f, luaString(x.ExpectedResult)))
			}
			if len(all) == 0 {
				all = []string{"true"}
			}
			any = append(any, "("+strings.Join(all, " and ")+")")
		}
		// Every matcher is evaluated, as InterpretStatus evaluates them, so
		// that an error anywhere is an error here too.
		e.w("  do\n    local hold = false\n")
		for _, a := range any {
			e.w("    if %s then hold = true end\n", a)
		}
		e.w("    if hold then matched[#matched+1] = %s end\n  end\n", luaString(string(m.Status)))
	}
	e.w("  return matched[1] or \"Undefined\"\nend\n\nRANK = {")
	for i, s := range karta.StatusPrecedence {
		e.w("%s = %d, ", s, i)
	}
	e.w("%s = %d}\n\n", karta.StatusUndefined, len(karta.StatusPrecedence))
	return nil
}

// reviseReplica emits ReviseReplica(obj, n) for a replicasPath that is a
// chain of fields (it must be assignable); a component with
// instances must have exactly one.
func (e *exporter) reviseReplica(c *compModel) error {
	a, err := e.p.model.exprs.analysis(c.replicas.expr)
	if err != nil {
		return e.fail(fmt.Sprintf("component %q: replicasPath", c.c.Name), c.replicas.expr, err)
	}
	fields, ok := fieldChain(a.Query)
	if !ok {
		return e.fail(fmt.Sprintf("component %q: replicasPath", c.c.Name), c.replicas.expr,
			fmt.Errorf("ReviseReplica exports only a chain of fields (.a.b.c)"))
	}
	e.w("function ReviseReplica(obj, n)\n")
	e.w("  if n < 0 or n > %d then error(\"ReviseReplica: \" .. n .. \" is out of range\") end\n", maxReplicas)
	if c.index > 0 && c.ids != nil {
		f, err := e.expr(fmt.Sprintf("component %q: instanceIdPath", c.c.Name), c.c.InstanceIDPath)
		if err != nil {
			return err
		}
		e.w("  local ids = instanceIDs(%s({W(obj)}), %s)\n", f, luaString(c.c.Name))
		e.w("  if #ids ~= 1 then error(%s .. #ids .. \" instances, not one\") end\n", luaString(fmt.Sprintf("ReviseReplica: component %s has ", c.c.Name)))
	}
	e.w("  local t = obj\n")
	for _, f := range fields[:len(fields)-1] {
		e.w("  if t[%[1]s] == nil then t[%[1]s] = {} elseif type(t[%[1]s]) ~= \"table\" or t[%[1]s][1] ~= nil then error(\"ReviseReplica: cannot index \" .. %[1]s) end\n  t = t[%[1]s]\n", luaString(f))
	}
	e.w("  t[%s] = n\n  return obj\nend\n\n", luaString(fields[len(fields)-1]))
	return nil
}

// fieldChain returns the fields of an expression of the form .a.b["c"].
func fieldChain(q *gojq.Query) ([]string, bool) {
	if q.Term == nil || q.Left != nil || q.Right != nil {
		return nil, false
	}
	t := q.Term
	var fields []string
	add := func(ix *gojq.Index) bool {
		switch {
		case ix == nil || ix.IsSlice || ix.Start != nil || ix.End != nil:
			return false
		case ix.Name != "":
			fields = append(fields, ix.Name)
		case ix.Str != nil && len(ix.Str.Queries) == 0:
			fields = append(fields, ix.Str.Str)
		default:
			return false
		}
		return true
	}
	if t.Type != gojq.TermTypeIndex || !add(t.Index) {
		return nil, false
	}
	for _, s := range t.SuffixList {
		if s.Iter || s.Optional || !add(s.Index) {
			return nil, false
		}
	}
	return fields, true
}

// karmadaHooks are the hooks Karmada calls, which an exported override may
// define.
var karmadaHooks = map[string]bool{
	string(HookGetReplicas): true, string(HookGetComponents): true, string(HookReviseReplica): true,
	string(HookRetain): true, string(HookAggregateStatus): true, string(HookReflectStatus): true,
	string(HookInterpretHealth): true, string(HookGetDependencies): true,
}

var kartaRef = regexp.MustCompile(`\b(karta|jq)\b`)

// exportOverrides returns the override chunks to append and whether one
// defines Retain. An override must define only Karmada hooks and must not
// use karta or jq, and an Argo CD health script cannot be exported.
func (p *Program) exportOverrides() (string, bool, error) {
	var b strings.Builder
	retain := false
	for _, o := range p.overrides {
		if o.argo {
			return "", false, &ExportError{Karta: p.name, Reason: fmt.Sprintf("%s: an Argo CD health script is not exported", o.chunk)}
		}
		if m := kartaRef.FindString(o.source); m != "" {
			return "", false, &ExportError{Karta: p.name, Reason: fmt.Sprintf("%s uses %s, which Karmada's runtime does not have", o.chunk, m)}
		}
		for _, g := range o.globals {
			if IsHook(g) && !karmadaHooks[g] {
				return "", false, &ExportError{Karta: p.name, Reason: fmt.Sprintf("%s overrides %s, which the export cannot carry", o.chunk, g)}
			}
			if g == string(HookRetain) {
				retain = true
			}
		}
		fmt.Fprintf(&b, "\n-- override: %s\n%s", luaEscape(o.chunk), o.source)
		if !strings.HasSuffix(o.source, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String(), retain, nil
}

// luaEscape keeps a name fit for a Lua comment or a double-quoted string.
func luaEscape(s string) string {
	q := strconv.Quote(s)
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(q[1 : len(q)-1])
}

// exportPrelude is the helpers of the exported hooks, after the jq
// runtime (J, JX, NULL) and the accessors (Q). JSON null is NULL inside
// output lists; values handed to Karmada's kube functions go through
// JX.plain, which leaves nulls out as Karmada's own decoding does.
const exportPrelude = `local kube = require("kube")
local function W(v) if v == nil then return NULL end return v end
local function U(v) if v == NULL then return nil end return v end
local function tname(v) if v == nil then return "null" end return JX.kind(v) end
local function run(acc, v, what)
  local out = {}
  local ok, e = pcall(acc, v, out)
  if ok then return out end
  local m = JX.message(e)
  if m ~= nil then error(what .. ": " .. m, 0) end
  error(e, 0)
end
local function zip(outs, ids, what)
  if #outs ~= #ids then error(what .. " yields " .. #outs .. " value(s) for " .. #ids .. " id(s)") end
  return outs
end
function instanceIDs(outs, comp)
  local ids, seen = {}, {}
  for i, v in ipairs(outs) do
    local id
    if type(v) == "string" and v ~= "" then id = v
    elseif type(v) == "number" then id = J.tostring(v)
    else error("component " .. comp .. ": instanceIdPath output " .. i .. ": not a non-empty string or a number") end
    if seen[id] then error("component " .. comp .. ": instanceIdPath yields duplicate id " .. id) end
    seen[id] = true
    ids[#ids+1] = id
  end
  return ids
end
function scaleValue(v, what)
  if v == nil or v == NULL then return nil end
  local n = v
  if type(v) == "string" and string.match(v, "^[+-]?%d+$") then n = tonumber(v) end
  if type(n) ~= "number" or n ~= math.floor(n) or n < 0 or n > 2147483647 then error(what .. ": " .. tostring(U(v)) .. " (" .. tname(U(v)) .. ") is not a replica count") end
  return n
end
function conditionsOf(outs, typeField, statusField, reasonField, messageField)
  local conds = {}
  local function field(c, name, ty)
    if name == "" then return nil end
    local v = c[name]
    if v == NULL then v = nil end
    if v ~= nil and type(v) ~= "string" then error("condition " .. ty .. ": field " .. name .. " must be a string or null") end
    return v
  end
  for _, arr in ipairs(outs) do
    if arr ~= NULL then
      if type(arr) ~= "table" or (next(arr) ~= nil and arr[1] == nil) then error("conditionsDefinition.path: not an array of objects or null") end
      for _, c in ipairs(arr) do
        if JX.kind(c) ~= "object" then error("conditionsDefinition.path: an entry is not an object") end
        local ty = c[typeField]
        if type(ty) == "string" and ty ~= "" then
          local st, rs = field(c, statusField, ty), field(c, reasonField, ty)
          field(c, messageField, ty)
          conds[ty] = {status = st, reason = rs}
        end
      end
    end
  end
  return conds
end
function condition(conds, ty, status, reason)
  local c = conds[ty]
  if c == nil then return false end
  if status ~= "" and c.status ~= status then return false end
  if reason ~= "" and c.reason ~= reason then return false end
  return true
end
function expression(outs, expected)
  if #outs == 0 then return false end
  return J.tostring(outs[1]) == expected
end
function depKey(d)
  return (d.apiVersion or "") .. "\1" .. (d.kind or "") .. "\1" .. (d.namespace or "") .. "\1" .. (d.name or "")
end

`

// fragmentedUnits ends units_<index> for a fragmented definition: every
// instance is present, and its view is the PodTemplateSpec view that the
// in-process hooks build (compModel.fragmentedView): each
// defined node's non-null fragment under ancestors that always exist as
// objects, and spec.containers = [main] ++ containersPath, main being
// containerPath's object with .image and .resources taken from imagePath
// and resourcesPath when those are defined.
func (e *exporter) fragmentedUnits(c *compModel) error {
	name := c.c.Name
	vars := map[string]string{}
	for i, f := range c.fragments {
		ff, err := e.expr(fmt.Sprintf("component %q: %s", name, f.p.field), f.p.expr)
		if err != nil {
			return err
		}
		v := fmt.Sprintf("frag%d", i)
		vars[f.key] = v
		e.w("  local %s = zip(%s({W(obj)}), ids, %s)\n", v, ff, luaString(name+": "+f.p.field))
	}
	e.w("  local reps\n")
	if sp := c.scale; sp != nil && sp.replicas != nil {
		rf, err := e.expr(fmt.Sprintf("component %q: replicasPath", name), sp.replicas.expr)
		if err != nil {
			return err
		}
		e.w("  if scaled then reps = zip(%s({W(obj)}), ids, %s) end\n", rf, luaString(name+": replicasPath"))
	}
	e.w("  local out = {}\n  for i, id in ipairs(ids) do\n    local view = {}\n")
	for _, n := range c.nodes {
		// Ancestors of a defined node always exist as objects.
		at := "view"
		for _, k := range n.at[:len(n.at)-1] {
			at += "." + k.(string)
			e.w("    if %[1]s == nil then %[1]s = {} end\n", at)
		}
		last := n.at[len(n.at)-1].(string)
		if !n.containers {
			e.w("    if %[1]s[i] ~= NULL then %[2]s.%[3]s = JX.plain(%[1]s[i]) end\n", vars[c.keyOf(n.p)], at, last)
			continue
		}
		e.w("    do\n      local main, list = nil, {}\n")
		if v, ok := vars["container"]; ok {
			e.w("      if %s[i] ~= NULL then\n", v)
			e.w("        local m = %s[i]\n", v)
			e.w("        if JX.kind(m) ~= \"object\" then error(%s .. id .. \": containerPath yields \" .. tname(m) .. \", not an object\") end\n",
				luaString(fmt.Sprintf("component %s instance ", name)))
			e.w("        main = {}\n        for k, x in pairs(JX.plain(m)) do main[k] = x end\n      end\n")
		}
		for _, key := range []string{"image", "resources"} {
			v, ok := vars[key]
			if !ok {
				continue
			}
			e.w("      if main ~= nil then main.%s = nil end\n", key)
			e.w("      if %[1]s[i] ~= NULL then\n        if main == nil then main = {} end\n        main.%[2]s = JX.plain(%[1]s[i])\n      end\n", v, key)
		}
		e.w("      if main ~= nil then list[1] = main end\n")
		hasList := "main ~= nil"
		if v, ok := vars["containers"]; ok {
			e.w("      local cs = %s[i]\n      if cs ~= NULL then\n", v)
			e.w("        if type(cs) ~= \"table\" or (next(cs) ~= nil and cs[1] == nil) then error(%s .. id .. \": containersPath yields \" .. tname(cs) .. \", not an array\") end\n",
				luaString(fmt.Sprintf("component %s instance ", name)))
			e.w("        for _, x in ipairs(cs) do list[#list+1] = JX.plain(x) end\n      end\n")
			hasList += " or cs ~= NULL"
		}
		e.w("      if %s then %s.%s = list end\n    end\n", hasList, at, last)
	}
	e.w("      local n = 1\n")
	e.w("      if reps ~= nil then local v = scaleValue(reps[i], %s); if v ~= nil then n = v end end\n", luaString(name+": replicasPath"))
	e.w("      out[#out+1] = {id = id, replicas = n * factor, view = view}\n")
	e.w("  end\n  return out\nend\n\n")
	return nil
}
