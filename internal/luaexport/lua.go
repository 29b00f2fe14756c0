package luaexport

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/kartalua/karta/internal/jqlua"
	"github.com/kartalua/karta/internal/third_party/gojq"
	"github.com/kartalua/karta/karta"
)

// FieldChain returns the fields of an expression that is a chain of
// constant fields: .a.b, ."c" and .["d"] (an index by a constant string).
func FieldChain(q *gojq.Query) ([]string, bool) {
	if q.Term == nil || q.Left != nil || q.Right != nil {
		return nil, false
	}
	t := q.Term
	var fields []string
	add := func(ix *gojq.Index) bool {
		switch {
		case ix == nil || ix.IsSlice || ix.End != nil:
			return false
		case ix.Name != "":
			fields = append(fields, ix.Name)
		case ix.Str != nil && len(ix.Str.Queries) == 0:
			fields = append(fields, ix.Str.Str)
		case ix.Start != nil && ix.End == nil && isConstString(ix.Start):
			fields = append(fields, ix.Start.Term.Str.Str)
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

// isConstString reports whether q is a string literal without
// interpolation: the key of .["name"].
func isConstString(q *gojq.Query) bool {
	return q.Left == nil && q.Right == nil && q.Term != nil && q.Term.Type == gojq.TermTypeString &&
		q.Term.Str != nil && len(q.Term.Str.Queries) == 0 && len(q.Term.SuffixList) == 0
}

// Escape keeps a name fit for a Lua comment or a double-quoted string.
func Escape(s string) string {
	q := strconv.Quote(s)
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(q[1 : len(q)-1])
}

// helpers are the helpers of exported hooks, after the jq runtime (J, JX,
// NULL) and the accessors (Q), in the order a chunk defines them (a helper
// names only those before it). JSON null is NULL inside output lists;
// values handed to Karmada's kube functions go through JX.plain, which
// leaves nulls out as Karmada's own decoding does. A chunk carries those
// its body names, and what they name in turn (Chunk's walk): each is a
// closure or a table built on every run of the chunk.
var helpers = []struct{ name, text string }{
	{"W", "local function W(v) if v == nil then return NULL end return v end\n"},
	{"U", "local function U(v) if v == NULL then return nil end return v end\n"},
	{"tname", "local function tname(v) if v == nil then return \"null\" end return JX.kind(v) end\n"},
	{"run", `local function run(acc, v, what)
  local out = {}
  local ok, e = pcall(acc, v == nil and NULL or v, out)
  if ok then return out end
  error(JX.message(e) and what .. ": " .. JX.message(e) or e, 0)
end
`},
	{"pipe", `-- pipe runs the accessor p | s as jq does: s on each output of p in
-- order, so the first error is one s raises on an output p yielded before
-- its own error, else p's.
local function pipe(p, s, v, out)
  local mid = {}
  local ok, e = pcall(p, v, mid)
  for _, x in ipairs(mid) do s(x, out) end
  if not ok then error(e, 0) end
end
`},
	{"V", `local WHAT = nil
local function V(acc, v, what)
  WHAT = what
  if v == nil then v = NULL end
  return acc(v)
end
`},
	{"zip", `local function zip(outs, ids, what)
  if #outs ~= #ids then error(what .. " yields " .. #outs .. " value(s) for " .. #ids .. " id(s)") end
  return outs
end
`},
	{"instanceIDs", `local function instanceIDs(outs, comp)
  local ids, seen = {}, {}
  for i, v in ipairs(outs) do
    local id
    if type(v) == "string" and v ~= "" then id = v
    elseif type(v) == "number" then id = JX.number(v)
    else error("component " .. comp .. ": instanceIdPath output " .. i .. ": not a non-empty string or a number") end
    if seen[id] then error("component " .. comp .. ": instanceIdPath yields duplicate id " .. id) end
    seen[id] = true
    ids[#ids+1] = id
  end
  return ids
end
`},
	{"scaleValue", `local function scaleValue(v, what)
  if v == nil or v == NULL then return nil end
  local n = v
  if type(v) == "string" and string.match(v, "^[+-]?%d+$") then n = tonumber(v) end
  if type(n) ~= "number" or n ~= math.floor(n) or n < 0 or n > 2147483647 then error(what .. ": " .. tostring(U(v)) .. " (" .. tname(U(v)) .. ") is not a replica count") end
  return n
end
`},
	{"conditionField", `local function conditionField(c, name, ty)
  if name == "" or c[name] == nil or c[name] == NULL then return nil end
  if type(c[name]) ~= "string" then error("condition " .. ty .. ": field " .. name .. " must be a string or null") end
  return c[name]
end
`},
	{"conditionsOf", `local function conditionsOf(outs, typeField, statusField, reasonField, messageField)
  local conds = {}
  for _, arr in ipairs(outs) do
    if arr ~= NULL and (type(arr) ~= "table" or next(arr) ~= nil and arr[1] == nil) then error("conditionsDefinition.path: not an array of objects or null") end
    for _, c in ipairs(arr) do
      if JX.kind(c) ~= "object" then error("conditionsDefinition.path: an entry is not an object") end
      local ty = c[typeField]
      if type(ty) == "string" and ty ~= "" then
        local st, rs, _ = conditionField(c, statusField, ty), conditionField(c, reasonField, ty), conditionField(c, messageField, ty)
        conds[ty] = {status = st, reason = rs}
      end
    end
  end
  return conds
end
`},
	{"condition", `local function condition(conds, ty, status, reason)
  local c = conds[ty]
  return c ~= nil and (status == "" or c.status == status) and (reason == "" or c.reason == reason)
end
`},
	{"anyOf", `local function anyOf(...)
  for i = 1, select("#", ...) do
    if select(i, ...) then return true end
  end
  return false
end
`},
	{"outputIs", `local function outputIs(outs, expected)
  if #outs == 0 then return false end
  return J.tostring(outs[1]) == expected
end
`},
	{"textIs", `-- J.tostring(v) == s without the encoder; n is the number s writes (karta's luaexport.TextIs).
local function textIs(v, s, n)
  if v == nil or v == NULL then return s == "null" end
  local t = type(v)
  if t == "number" then return v == n and (n ~= 0 or 1 / v > 0) or v ~= v and s == "null" end
  return t ~= "table" and tostring(v) == s
end
`},
	{"depKey", `local function depKey(d)
  return (d.apiVersion or "") .. "\1" .. (d.kind or "") .. "\1" .. (d.namespace or "") .. "\1" .. (d.name or "")
end
`},
	{"RANK", rankTable()},
}

// TextIs is the Lua of J.tostring(x) == want, a byExpression matcher's
// test of its expression's one output. For a want that no array or object
// encodes to (neither begins with '[' or '{'), it is textIs, which needs
// no JSON encoder: a number's text is want only when the number is the one
// whose gojq encoding want is (none, for a want such as "1.0" or "x"), so
// the number is found here. An infinity encodes as ±MaxFloat64 and -0 as
// "-0": such a want keeps J.tostring.
func TextIs(x, want string) string {
	if strings.HasPrefix(want, "[") || strings.HasPrefix(want, "{") {
		return fmt.Sprintf("J.tostring(%s) == %s", x, jqlua.LuaString(want))
	}
	n := "nil"
	if f, err := strconv.ParseFloat(want, 64); err == nil {
		if bs, err := gojq.Marshal(f); err == nil && string(bs) == want {
			if math.Abs(f) == math.MaxFloat64 || f == 0 && math.Signbit(f) {
				return fmt.Sprintf("J.tostring(%s) == %s", x, jqlua.LuaString(want))
			}
			n = strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	return fmt.Sprintf("textIs(%s, %s, %s)", x, jqlua.LuaString(want), n)
}

// rankTable is RANK, each status's place in InterpretStatus's precedence.
func rankTable() string {
	var b strings.Builder
	b.WriteString("local RANK = {")
	for i, s := range karta.StatusPrecedence {
		fmt.Fprintf(&b, "%s = %d, ", s, i)
	}
	fmt.Fprintf(&b, "%s = %d}\n", karta.StatusUndefined, len(karta.StatusPrecedence))
	return b.String()
}

// helperText is every helper, in their order: a chunk carries those its
// body reaches (luaexport's Chunk walks the chunk with jqlua.ShakeChunk).
func helperText() string {
	var b strings.Builder
	for _, h := range helpers {
		b.WriteString(h.text)
	}
	return b.String()
}

// Literal writes a JSON value as a Lua expression (objects and arrays
// as table constructors; null as nil).
func Literal(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "nil", nil
	case bool:
		return strconv.FormatBool(x), nil
	case string:
		return jqlua.LuaString(x), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int:
		return strconv.Itoa(x), nil
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			s, err := Literal(e)
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
			s, err := Literal(x[k])
			if err != nil {
				return "", err
			}
			parts = append(parts, "["+jqlua.LuaString(k)+"] = "+s)
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
