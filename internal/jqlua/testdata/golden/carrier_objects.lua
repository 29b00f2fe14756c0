-- {r: ., i: (.spec.items // [] | keys[])} | {c: .r.spec.items[.i], i: .i} | "\(.c.name)/\(.i)"
Q[1] = function(v, out)
  local spec = type(v) == "table" and v.spec or J.field(v, "spec")
  local items = type(spec) == "table" and spec.items or J.field(spec, "items")
  if items == NULL or items == false then items = J.array() end
  local keys = J.keys(items)
  for _, x in J.each(keys) do
    local items_2 = type(spec) == "table" and spec.items or J.field(spec, "items")
    local t = J.index(items_2, x)
    local str = J.tostring(x)
    local name = type(t) == "table" and t.name or J.field(t, "name")
    local t_2 = J.tostring(name) .. "/" .. str
    J.emit(out, t_2)
  end
end
