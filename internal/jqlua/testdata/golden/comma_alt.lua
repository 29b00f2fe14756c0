-- (.a, .b[]) // "none" | tostring
Q[1] = function(v, out)
  local function k(x)
    J.emit(out, J.tostring(x))
  end
  local found = {}
  local function k_2(x_2)
    if x_2 ~= NULL and x_2 ~= false then
      found[1] = true
      k(x_2)
    end
  end
  local a = type(v) == "table" and v.a or J.field(v, "a")
  k_2(a)
  local b = type(v) == "table" and v.b or J.field(v, "b")
  for _, x_3 in J.each(b) do
    k_2(x_3)
  end
  if not found[1] then k("none") end
end
