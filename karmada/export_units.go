package karmada

import (
	"fmt"
	"strings"

	"github.com/kartalua/karta/internal/jqlua"
	"github.com/kartalua/karta/internal/luaexport"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// unitsLua is the code every pod-bearing component shares: units(obj, c,
// scaled), the present instances of the component c (a table of data that
// componentTable writes) as {id, replicas, view}, replicas including the
// scaled ancestors' factor, computed only when scaled; views(obj, c), the
// same instances without replicas, what GetDependencies reads, so that a
// dependency rule carries none of the replicas' checks. A component is data,
// not code: a Karta of many components, or of many fragments each, would
// otherwise carry the same loops once per component. The order of the
// evaluations and the errors are those of the in-process hooks: the
// ancestors' ids and replicas, the component's ids, its paths in the
// order they are defined, then its replicas, each named by its field.
const unitsLua = `-- The ids of c's instances ({""} without an instanceIdPath).
local function idsOf(obj, c)
  if c.ids == nil then return {""} end
  return c.instanceIDs(run(c.ids, obj, c.label .. ": instanceIdPath"), c.name)
end

local function pathOf(obj, c, ids, q, field)
  return zip(run(q, obj, c.label .. ": " .. field), ids, c.name .. ": " .. field)
end

local function objectOf(v, c, field, id)
  if JX.kind(v) ~= "object" then error("component " .. c.name .. ": " .. field .. " of instance " .. id .. ": not an object") end
  return JX.plain(v)
end

-- The view of instance i (nil when its spec is null: no instance).
local function templateView(c, outs, i, id)
  local s = outs.spec[i]
  if s == NULL then return nil end
  return objectOf(s, c, c.paths[1].field, id)
end

local function specView(c, outs, i, id)
  local s = outs.spec[i]
  if s == NULL then return nil end
  local view = {spec = objectOf(s, c, c.paths[1].field, id)}
  if outs.metadata ~= nil and outs.metadata[i] ~= NULL then
    view.metadata = objectOf(outs.metadata[i], c, "metadataPath", id)
  end
  return view
end

-- spec.containers of a fragmented view: [main] ++ containersPath, main
-- being containerPath's object with imagePath's and resourcesPath's values.
local function containersOf(c, outs, i, id)
  local main, list = nil, {}
  local m = outs.container and outs.container[i]
  if m ~= nil and m ~= NULL then
    if JX.kind(m) ~= "object" then error("component " .. c.name .. " instance " .. id .. ": containerPath yields " .. tname(m) .. ", not an object") end
    main = {}
    for k, x in pairs(JX.plain(m)) do main[k] = x end
  end
  for _, key in ipairs({"image", "resources"}) do
    local o = outs[key]
    if o ~= nil then
      if main ~= nil then main[key] = nil end
      if o[i] ~= NULL then
        if main == nil then main = {} end
        main[key] = JX.plain(o[i])
      end
    end
  end
  if main ~= nil then list[1] = main end
  local cs = outs.containers and outs.containers[i]
  if cs ~= nil and cs ~= NULL then
    if type(cs) ~= "table" or (next(cs) ~= nil and cs[1] == nil) then error("component " .. c.name .. " instance " .. id .. ": containersPath yields " .. tname(cs) .. ", not an array") end
    for _, x in ipairs(cs) do list[#list+1] = JX.plain(x) end
  end
  if main ~= nil or (cs ~= nil and cs ~= NULL) then return list end
  return nil
end

-- The view of a fragmented definition: each node's non-null fragment.
local function fragmentView(c, outs, i, id)
  local view = {}
  for _, n in ipairs(c.nodes) do
    local at = view
    for j = 1, #n.at - 1 do
      if at[n.at[j]] == nil then at[n.at[j]] = {} end
      at = at[n.at[j]]
    end
    local v
    if n.containers then v = containersOf(c, outs, i, id)
    elseif outs[n.key][i] ~= NULL then v = JX.plain(outs[n.key][i]) end
    if v ~= nil then at[n.at[#n.at]] = v end
  end
  return view
end

-- The product of the replicas of c's scaled ancestors (s.scaledBy).
local function scaledFactor(obj, c, s)
  local factor = 1
  for _, a in ipairs(s.scaledBy) do
    local ids = idsOf(obj, a)
    local r = pathOf(obj, a, ids, a.replicas, "replicasPath")
    if #ids ~= 1 then error("component " .. c.name .. ": its scaled ancestor " .. a.name .. " has " .. #ids .. " instances, not one") end
    local n = scaleValue(r[1], a.name .. ": replicasPath")
    if n ~= nil then factor = factor * n end
  end
  return factor
end

-- The present instances of component c as {id, view}: what
-- GetDependencies reads, units without replicas.
local function views(obj, c)
  if c.none then return {} end
  local ids = idsOf(obj, c)
  local outs, out = {}, {}
  for _, p in ipairs(c.paths) do outs[p.key] = pathOf(obj, c, ids, p.q, p.field or p.key .. "Path") end
  for i, id in ipairs(ids) do
    local v = c.view(c, outs, i, id)
    if v ~= nil then out[#out+1] = {id = id, view = v} end
  end
  return out
end

-- The present instances of component c as {id, replicas, view}, scaled
-- by its scale table s (replicas 1 without).
local function units(obj, c, s)
  if c.none then return {} end
  local factor = 1
  if s ~= nil and s.factor ~= nil then factor = s.factor(obj, c, s) end
  local ids = idsOf(obj, c)
  local outs = {}
  for _, p in ipairs(c.paths) do outs[p.key] = pathOf(obj, c, ids, p.q, p.field or p.key .. "Path") end
  local reps
  if s ~= nil and s.replicas ~= nil then reps = pathOf(obj, c, ids, s.replicas, "replicasPath") end
  local out = {}
  for i, id in ipairs(ids) do
    local v = c.view(c, outs, i, id)
    if v ~= nil then
      local n = 1
      if reps ~= nil then local x = scaleValue(reps[i], c.name .. ": replicasPath"); if x ~= nil then n = x end end
      out[#out+1] = {id = id, replicas = n * factor, view = v}
    end
  end
  return out
end

`

// componentVar is the Lua name of a component's table.
func componentVar(c *interpreter.ComponentShape) string { return fmt.Sprintf("C%d", c.Index) }

// scaleVar is the Lua name of a component's scale table (S<index>), ""
// for a component without replicas or scaled ancestors.
func scaleVar(c *interpreter.ComponentShape) string {
	for a := c; a != nil; a = a.Parent {
		if a.ReplicasPath != "" {
			return fmt.Sprintf("S%d", c.Index)
		}
	}
	return ""
}

// scaledList is the Lua list of the components' tables each with its
// scale table, as GetComponents passes them to units: {{C1, S1}, {C2}}.
func scaledList(cs []*interpreter.ComponentShape) string {
	items := make([]string, len(cs))
	for i, c := range cs {
		items[i] = "{" + componentVar(c) + "}"
		if s := scaleVar(c); s != "" {
			items[i] = "{" + componentVar(c) + ", " + s + "}"
		}
	}
	return strings.Join(items, ", ")
}

// componentTable writes C<index>, component c as units reads it: its name
// and label (as errors name it), its accessors and their fields (and
// instanceIDs with an instanceIdPath), and its
// view function (templateView, specView, or fragmentView with the view's
// nodes, N<k>, a table that components with the same nodes share: nodes
// maps a list's Lua to its name), so that a chunk carries only the
// functions its components use;
// then S<index> (scaleVar), what scaling its instances takes: its
// replicasPath's accessor and, with scaled ancestors, scaledFactor and
// the ancestors. The rules that count replicas pass S to units and the
// others (GetDependencies) do not, so that their scripts carry none of
// the replicas' accessors. A component whose instanceIdPath yields
// nothing in an export is none: it has no instances.
func componentTable(e *luaexport.Exporter, c *interpreter.ComponentShape, nodes map[string]string) error {
	return writeComponentTable(e, c, componentVar(c), "", nodes)
}

// dependencyVar is the Lua name of the table GetDependencies reads for
// component c: C<index> when c as GetDependencies reads it
// (ComponentShape.DependencyShape) is c, else D<index>.
func dependencyVar(c *interpreter.ComponentShape) string {
	if d := c.DependencyShape(); len(d.Fragments) != len(c.Fragments) {
		return fmt.Sprintf("D%d", c.Index)
	}
	return componentVar(c)
}

// dependencyTable writes D<index> for a component whose dependencyVar is
// one: its table with only the paths that can name a dependency
// (ComponentShape.DependencyShape), as in process GetDependencies reads
// them, and no scale table.
func dependencyTable(e *luaexport.Exporter, c *interpreter.ComponentShape, nodes map[string]string) error {
	v := dependencyVar(c)
	if v == componentVar(c) {
		return nil
	}
	return writeComponentTable(e, c.DependencyShape(), v, "its paths that can name a dependency", nodes)
}

// writeComponentTable is componentTable writing c's table as v, what
// saying in its comment which reading of the component it is; the scale
// table goes with the component's own table (C<index>) alone.
func writeComponentTable(e *luaexport.Exporter, c *interpreter.ComponentShape, v, what string, nodes map[string]string) error {
	name := c.Name
	if what != "" {
		e.W("-- component %s, %s\n", luaexport.Escape(name), what)
	} else {
		e.W("-- component %s\n", luaexport.Escape(name))
	}
	if e.NoInstances(c) {
		e.W("local %s = {name = %s, none = true} -- no instance without its references\n\n", v, jqlua.LuaString(name))
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "local %s = {\n", v)
	ids := func(cm *interpreter.ComponentShape) (string, error) {
		s := fmt.Sprintf("name = %s, label = %s", jqlua.LuaString(cm.Name), jqlua.LuaString(fmt.Sprintf("component %q", cm.Name)))
		if cm.InstanceIDPath == "" {
			return s, nil
		}
		q, err := e.Accessor(fmt.Sprintf("component %q: instanceIdPath", cm.Name), cm.InstanceIDPath)
		return s + ", ids = " + q + ", instanceIDs = instanceIDs", err
	}
	self, err := ids(c)
	if err != nil {
		return err
	}
	fmt.Fprintf(&b, "  %s,\n", self)
	var scaledBy []string
	for a := c.Parent; a != nil; a = a.Parent {
		if a.ReplicasPath == "" {
			continue
		}
		aids, err := ids(a)
		if err != nil {
			return err
		}
		rq, err := e.Accessor(fmt.Sprintf("component %q: replicasPath", a.Name), a.ReplicasPath)
		if err != nil {
			return err
		}
		scaledBy = append(scaledBy, fmt.Sprintf("\n    {%s, replicas = %s},", aids, rq))
	}
	var scale strings.Builder
	if len(scaledBy) > 0 {
		fmt.Fprintf(&scale, "  factor = scaledFactor, scaledBy = {%s},\n", strings.Join(scaledBy, ""))
	}
	path := func(key string, p interpreter.ShapePath) error {
		q, err := e.Accessor(fmt.Sprintf("component %q: %s", name, p.Field), p.Expr)
		if err != nil {
			return err
		}
		// A fragment's field is its key's path (labels, labelsPath),
		// which units derives: only another field is written.
		if p.Field == key+"Path" {
			fmt.Fprintf(&b, "    {key = %s, q = %s},\n", jqlua.LuaString(key), q)
		} else {
			fmt.Fprintf(&b, "    {key = %s, field = %s, q = %s},\n", jqlua.LuaString(key), jqlua.LuaString(p.Field), q)
		}
		return nil
	}
	b.WriteString("  paths = {\n")
	if c.Style == karta.SpecStyleFragmented {
		for _, f := range c.Fragments {
			if err := path(f.Key, f.ShapePath); err != nil {
				return err
			}
		}
	} else {
		if err := path("spec", *c.Spec); err != nil {
			return err
		}
		if c.Metadata != nil {
			if err := path("metadata", *c.Metadata); err != nil {
				return err
			}
		}
	}
	b.WriteString("  },\n")
	if c.ReplicasPath != "" {
		rq, err := e.Accessor(fmt.Sprintf("component %q: replicasPath", name), c.ReplicasPath)
		if err != nil {
			return err
		}
		fmt.Fprintf(&scale, "  replicas = %s,\n", rq)
	}
	switch c.Style {
	case karta.SpecStylePodTemplateSpec:
		b.WriteString("  view = templateView,\n")
	case karta.SpecStyleFragmented:
		var nb strings.Builder
		for _, n := range c.Nodes {
			at := make([]string, len(n.At))
			for i, k := range n.At {
				at[i] = jqlua.LuaString(k)
			}
			if n.Containers {
				fmt.Fprintf(&nb, "  {at = {%s}, containers = true},\n", strings.Join(at, ", "))
			} else {
				fmt.Fprintf(&nb, "  {at = {%s}, key = %s},\n", strings.Join(at, ", "), jqlua.LuaString(n.Key))
			}
		}
		// Components of one Karta often have the same nodes (the same
		// fragment paths): one table serves them all.
		name, ok := nodes[nb.String()]
		if !ok {
			name = fmt.Sprintf("N%d", len(nodes)+1)
			nodes[nb.String()] = name
			e.W("-- the view's nodes of component %s\nlocal %s = {\n%s}\n\n", luaexport.Escape(c.Name), name, nb.String())
		}
		fmt.Fprintf(&b, "  view = fragmentView, nodes = %s,\n", name)
	default:
		b.WriteString("  view = specView,\n")
	}
	b.WriteString("}\n\n")
	if s := scaleVar(c); s != "" && v == componentVar(c) {
		fmt.Fprintf(&b, "local %s = {\n%s}\n\n", s, scale.String())
	}
	e.W("%s", b.String())
	return nil
}
