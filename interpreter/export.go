package interpreter

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kartalua/karta/internal/third_party/gojq"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/karta"
)

// ExportKarmada renders the Program as a ResourceInterpreterCustomization
// (config.karmada.io/v1alpha1) for Karmada's own runtime (SPEC §10.4
// Export): metadata.name karta-<name>, spec.target the root's kind, and one
// rule per Karmada hook the Karta generates (SPEC §10.1):
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
// PodTemplateSpec view (SPEC §6.1) in Lua. An expression outside the
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
	p     *Program
	t     jqToLua
	exprs []string // E[i] bodies
	b     strings.Builder
}

func (e *exporter) fail(field, expr string, err error) error {
	return &ExportError{Karta: e.p.name, Field: field, Expr: expr, Reason: err.Error()}
}

// expr translates a jq path and returns the Lua name of its function of
// the object (returning the list of outputs).
func (e *exporter) expr(field, expr string) (string, error) {
	code, err := e.t.translate(expr, "_in")
	if err != nil {
		return "", e.fail(field, expr, err)
	}
	e.exprs = append(e.exprs, code)
	return fmt.Sprintf("E[%d]", len(e.exprs)), nil
}

func (e *exporter) w(format string, args ...any) { fmt.Fprintf(&e.b, format, args...) }

// exportLua returns the chunk and the rules it serves, in Karmada's field
// order.
func (p *Program) exportLua() (string, []string, error) {
	e := &exporter{p: p}
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
	body.WriteString(exportPrelude)
	body.WriteString("local E = {}\n")
	for i, code := range e.exprs {
		fmt.Fprintf(&body, "E[%d] = function(_in) return %s end\n", i+1, code)
	}
	body.WriteString("\n")
	body.WriteString(e.b.String())
	body.WriteString(overrides)
	return body.String(), rules, nil
}

// units emits units_<index>(obj, scaled): the present instances of c as
// {id, replicas, view}, replicas including the scaled ancestors' (SPEC
// §10.1), computed only when scaled.
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
	e.w("      if type(s) ~= \"table\" or s[1] ~= nil then error(%s .. id .. \": not an object\") end\n", luaString(fmt.Sprintf("component %s: %s of instance ", name, c.spec.field)))
	if c.style == karta.SpecStylePodTemplateSpec {
		e.w("      local view = s\n")
	} else {
		e.w("      local view = {spec = s}\n")
		if c.meta != nil {
			e.w("      if metas[i] ~= NULL then\n")
			e.w("        if type(metas[i]) ~= \"table\" or metas[i][1] ~= nil then error(%s .. id .. \": not an object\") end\n", luaString(fmt.Sprintf("component %s: metadataPath of instance ", name)))
			e.w("        view.metadata = metas[i]\n      end\n")
		}
	}
	e.w("      local n = 1\n")
	e.w("      if reps ~= nil then local v = scaleValue(reps[i], %s); if v ~= nil then n = v end end\n", luaString(name+": replicasPath"))
	e.w("      out[#out+1] = {id = id, replicas = n * factor, view = view}\n")
	e.w("    end\n  end\n  return out\nend\n\n")
	return nil
}

// status emits statusOf(obj), the generic status of SPEC §5, and RANK.
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
// chain of fields (SPEC §6.3: it must be assignable); a component with
// instances must have exactly one.
func (e *exporter) reviseReplica(c *compModel) error {
	fields, ok := fieldChain(c.replicas.expr)
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
func fieldChain(expr string) ([]string, bool) {
	q, err := gojq.Parse(expr)
	if err != nil || q.Term == nil || q.Left != nil || q.Right != nil {
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

// exportPrelude is the pure-Lua runtime of the exported jq subset and the
// helpers of the exported hooks. JSON null is NULL inside output lists.
const exportPrelude = `local kube = require("kube")
local NULL = {}
local function W(v) if v == nil then return NULL end return v end
local function U(v) if v == NULL then return nil end return v end
local function isArray(t) return t[1] ~= nil end
local function tname(v) if v == nil then return "null" end return type(v) end
local function CONST(v) return {v} end
local function FIELD(ins, k, opt)
  local out = {}
  for _, v in ipairs(ins) do
    v = U(v)
    if v == nil then out[#out+1] = NULL
    elseif type(v) == "table" and not isArray(v) then out[#out+1] = W(v[k])
    elseif not opt then error("cannot index " .. tname(v) .. " with " .. k) end
  end
  return out
end
local function INDEX(ins, i, opt)
  local out = {}
  for _, v in ipairs(ins) do
    v = U(v)
    if v == nil then out[#out+1] = NULL
    elseif type(v) == "table" and (isArray(v) or next(v) == nil) then out[#out+1] = W(v[i+1])
    elseif not opt then error("cannot index " .. tname(v) .. " with a number") end
  end
  return out
end
local function ITER(ins, opt)
  local out = {}
  for _, v in ipairs(ins) do
    v = U(v)
    if type(v) == "table" then
      if isArray(v) then
        for _, x in ipairs(v) do out[#out+1] = W(x) end
      else
        local ks = {}
        for k in pairs(v) do ks[#ks+1] = k end
        table.sort(ks)
        for _, k in ipairs(ks) do out[#out+1] = W(v[k]) end
      end
    elseif not opt then error("cannot iterate over " .. tname(v)) end
  end
  return out
end
local function PIPE(ins, f)
  local out = {}
  for _, v in ipairs(ins) do
    for _, o in ipairs(f({v})) do out[#out+1] = o end
  end
  return out
end
local function COMMA(a, b)
  local out = {}
  for _, o in ipairs(a()) do out[#out+1] = o end
  for _, o in ipairs(b()) do out[#out+1] = o end
  return out
end
local function ALT(a, b)
  local ok, r = pcall(a)
  local out = {}
  if ok then
    for _, o in ipairs(r) do
      if o ~= NULL and o ~= false then out[#out+1] = o end
    end
  end
  if #out > 0 then return out end
  return b()
end
local function MUL(a, b)
  local ra, rb = a(), b()
  local out = {}
  for _, y in ipairs(rb) do
    for _, x in ipairs(ra) do
      if type(x) ~= "number" or type(y) ~= "number" then error("cannot multiply " .. tname(U(x)) .. " and " .. tname(U(y))) end
      out[#out+1] = x * y
    end
  end
  return out
end
local function TRY(f)
  local ok, r = pcall(f)
  if ok then return r end
  return {}
end
local function truthy(v) return v ~= NULL and v ~= false and v ~= nil end
local function ADD(a, b)
  local ra, rb = a(), b()
  local out = {}
  for _, y in ipairs(rb) do
    for _, x in ipairs(ra) do
      if x == NULL then out[#out+1] = y
      elseif y == NULL then out[#out+1] = x
      elseif type(x) == "number" and type(y) == "number" then out[#out+1] = x + y
      elseif type(x) == "string" and type(y) == "string" then out[#out+1] = x .. y
      else error("cannot add " .. tname(U(x)) .. " and " .. tname(U(y))) end
    end
  end
  return out
end
local function SUB(a, b)
  local ra, rb = a(), b()
  local out = {}
  for _, y in ipairs(rb) do
    for _, x in ipairs(ra) do
      if type(x) ~= "number" or type(y) ~= "number" then error("cannot subtract " .. tname(U(y)) .. " from " .. tname(U(x))) end
      out[#out+1] = x - y
    end
  end
  return out
end
local function deepEq(x, y)
  if type(x) ~= "table" or type(y) ~= "table" or x == NULL or y == NULL then return x == y end
  for k, v in pairs(x) do if not deepEq(W(v), W(y[k])) then return false end end
  for k in pairs(y) do if x[k] == nil then return false end end
  return true
end
local function EQ(a, b)
  local ra, rb = a(), b()
  local out = {}
  for _, y in ipairs(rb) do for _, x in ipairs(ra) do out[#out+1] = deepEq(x, y) end end
  return out
end
local function NE(a, b)
  local out = EQ(a, b)
  for i, v in ipairs(out) do out[i] = not v end
  return out
end
local function CMP(a, b, f)
  local ra, rb = a(), b()
  local out = {}
  for _, y in ipairs(rb) do
    for _, x in ipairs(ra) do
      if type(x) ~= type(y) or (type(x) ~= "number" and type(x) ~= "string") then
        error("comparing " .. tname(U(x)) .. " and " .. tname(U(y)) .. " is not exported")
      end
      out[#out+1] = f(x, y)
    end
  end
  return out
end
local function GT(a, b) return CMP(a, b, function(x, y) return x > y end) end
local function LT(a, b) return CMP(a, b, function(x, y) return x < y end) end
local function GE(a, b) return CMP(a, b, function(x, y) return x >= y end) end
local function LE(a, b) return CMP(a, b, function(x, y) return x <= y end) end
local function AND(a, b)
  local out = {}
  for _, x in ipairs(a()) do
    if not truthy(x) then out[#out+1] = false
    else for _, y in ipairs(b()) do out[#out+1] = truthy(y) end end
  end
  return out
end
local function OR(a, b)
  local out = {}
  for _, x in ipairs(a()) do
    if truthy(x) then out[#out+1] = true
    else for _, y in ipairs(b()) do out[#out+1] = truthy(y) end end
  end
  return out
end
local function NOT(ins)
  local out = {}
  for _, v in ipairs(ins) do out[#out+1] = not truthy(v) end
  return out
end
local function COLLECT(outs)
  local arr = {}
  for i, v in ipairs(outs) do arr[i] = v end
  return {arr}
end
local function SELECT(ins, f)
  local out = {}
  for _, v in ipairs(ins) do
    for _, c in ipairs(f({v})) do
      if truthy(c) then out[#out+1] = v end
    end
  end
  return out
end
local function LENGTH(ins)
  local out = {}
  for _, v in ipairs(ins) do
    if v == NULL then out[#out+1] = 0
    elseif type(v) == "number" then out[#out+1] = math.abs(v)
    elseif type(v) == "string" then out[#out+1] = string.len(v)
    elseif type(v) == "table" then
      local n = 0
      for _ in pairs(v) do n = n + 1 end
      out[#out+1] = n
    else error(tname(v) .. " has no length") end
  end
  return out
end
local function IF(ins, c, th, el)
  local out = {}
  for _, v in ipairs(ins) do
    for _, x in ipairs(c({v})) do
      local r
      if truthy(x) then r = th({v}) else r = el({v}) end
      for _, o in ipairs(r) do out[#out+1] = o end
    end
  end
  return out
end
local function KEYS(ins)
  local out = {}
  for _, v in ipairs(ins) do
    v = U(v)
    if type(v) ~= "table" then error(tname(v) .. " has no keys") end
    local ks = {}
    if isArray(v) then
      for i = 1, #v do ks[i] = i - 1 end
    else
      for k in pairs(v) do ks[#ks+1] = k end
      table.sort(ks)
    end
    out[#out+1] = ks
  end
  return out
end
local function TYPE(ins)
  local out = {}
  for _, v in ipairs(ins) do
    v = U(v)
    if v == nil then out[#out+1] = "null"
    elseif type(v) == "table" then
      if isArray(v) then out[#out+1] = "array" else out[#out+1] = "object" end
    else out[#out+1] = type(v) end
  end
  return out
end
local function HAS(ins, f)
  local out = {}
  for _, v in ipairs(ins) do
    for _, k in ipairs(f({v})) do
      local x = U(v)
      if type(x) ~= "table" then error("cannot check whether " .. tname(x) .. " has a key") end
      if type(k) == "string" and not isArray(x) then out[#out+1] = x[k] ~= nil
      elseif type(k) == "number" and (isArray(x) or next(x) == nil) then out[#out+1] = k >= 0 and k < #x
      else error("cannot check whether " .. tname(x) .. " has a " .. tname(U(k)) .. " key") end
    end
  end
  return out
end
local function FIRST(ins, alts)
  local out = {}
  for _, v in ipairs(ins) do
    for _, f in ipairs(alts) do
      local r = f({v})
      if #r > 0 then out[#out+1] = r[1]; break end
    end
  end
  return out
end
local function zip(outs, ids, what)
  if #outs ~= #ids then error(what .. " yields " .. #outs .. " value(s) for " .. #ids .. " id(s)") end
  return outs
end
local function numString(v)
  if v == math.floor(v) and math.abs(v) < 1e17 then return string.format("%d", v) end
  return tostring(v)
end
function instanceIDs(outs, comp)
  local ids, seen = {}, {}
  for i, v in ipairs(outs) do
    local id
    if type(v) == "string" and v ~= "" then id = v
    elseif type(v) == "number" then id = numString(v)
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
    if v ~= nil and type(v) ~= "string" then error("condition " .. ty .. ": field " .. name .. " must be a string or null") end
    return v
  end
  for _, arr in ipairs(outs) do
    if arr ~= NULL then
      if type(arr) ~= "table" or (next(arr) ~= nil and arr[1] == nil) then error("conditionsDefinition.path: not an array of objects or null") end
      for _, c in ipairs(arr) do
        if type(c) ~= "table" or c[1] ~= nil then error("conditionsDefinition.path: an entry is not an object") end
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
  local v, s = outs[1], nil
  if v == NULL then s = "null"
  elseif type(v) == "string" then s = v
  elseif type(v) == "boolean" then s = tostring(v)
  elseif type(v) == "number" then s = numString(v)
  else error("byExpression: tostring of a " .. type(v) .. " is not exported") end
  return s == expected
end
function depKey(d)
  return (d.apiVersion or "") .. "\1" .. (d.kind or "") .. "\1" .. (d.namespace or "") .. "\1" .. (d.name or "")
end

`

// fragmentedUnits ends units_<index> for a fragmented definition: every
// instance is present, and its view is the PodTemplateSpec view of SPEC
// §6.1 that the in-process hooks build (compModel.fragmentedView): each
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
			e.w("    if %[1]s[i] ~= NULL then %[2]s.%[3]s = %[1]s[i] end\n", vars[c.keyOf(n.p)], at, last)
			continue
		}
		e.w("    do\n      local main, list = nil, {}\n")
		if v, ok := vars["container"]; ok {
			e.w("      if %s[i] ~= NULL then\n", v)
			e.w("        local m = %s[i]\n", v)
			e.w("        if type(m) ~= \"table\" or m[1] ~= nil then error(%s .. id .. \": containerPath yields \" .. tname(m) .. \", not an object\") end\n",
				luaString(fmt.Sprintf("component %s instance ", name)))
			e.w("        main = {}\n        for k, x in pairs(m) do main[k] = x end\n      end\n")
		}
		for _, key := range []string{"image", "resources"} {
			v, ok := vars[key]
			if !ok {
				continue
			}
			e.w("      if main ~= nil then main.%s = nil end\n", key)
			e.w("      if %[1]s[i] ~= NULL then\n        if main == nil then main = {} end\n        main.%[2]s = %[1]s[i]\n      end\n", v, key)
		}
		e.w("      if main ~= nil then list[1] = main end\n")
		hasList := "main ~= nil"
		if v, ok := vars["containers"]; ok {
			e.w("      local cs = %s[i]\n      if cs ~= NULL then\n", v)
			e.w("        if type(cs) ~= \"table\" or (next(cs) ~= nil and cs[1] == nil) then error(%s .. id .. \": containersPath yields \" .. tname(cs) .. \", not an array\") end\n",
				luaString(fmt.Sprintf("component %s instance ", name)))
			e.w("        for _, x in ipairs(cs) do list[#list+1] = x end\n      end\n")
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
