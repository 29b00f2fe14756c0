-- [.status.conditions[]? | select(.status == "True" and .type != "Created")] | length
Q[1] = function(v, out)
  local arr = J.array()
  local status = J.index(v, "status")
  local conditions = J.index(status, "conditions")
  for _, x in J.each_opt(conditions) do
    local status_2 = J.index(x, "status")
    local b = false
    if status_2 == "True" then
      local type_ = J.index(x, "type")
      b = type_ ~= "Created"
    end
    if b then
      arr[#arr + 1] = x
    end
  end
  local len = J.length(arr)
  J.emit(out, len)
end
