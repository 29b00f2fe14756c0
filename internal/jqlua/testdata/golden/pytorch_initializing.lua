-- [.status.conditions[]? | select(.status == "True" and .type != "Created")] | length
Q[1] = function(v, out)
  local arr = J.array()
  local status = type(v) == "table" and v.status or J.field(v, "status")
  local conditions = type(status) == "table" and status.conditions or J.field(status, "conditions")
  for _, x in J.each_opt(conditions) do
    local status_2 = type(x) == "table" and x.status or J.field(x, "status")
    local b = false
    if status_2 == "True" then
      local type_ = type(x) == "table" and x.type or J.field(x, "type")
      b = type_ ~= "Created"
    end
    if b then arr[#arr + 1] = x end
  end
  local len = #arr
  if out == nil then return len end
  J.emit(out, len)
end
