-- .memory | ascii_downcase | if endswith("gi") then (rtrimstr("gi") | tonumber * 1024) elif endswith("mi") then (rtrimstr("mi") | tonumber) elif . == "" then null elif .[0:1] == "x" then 0 else tonumber end
Q[1] = function(v, out)
  local memory = type(v) == "table" and v.memory or J.field(v, "memory")
  local lower = J.ascii_downcase(memory)
  local t
  if J.endswith(lower, "gi") then
    t = J.times(J.tonumber(J.rtrimstr(lower, "gi")), 1024)
  elseif J.endswith(lower, "mi") then
    t = J.tonumber(J.rtrimstr(lower, "mi"))
  elseif lower == "" then
    t = NULL
  elseif J.slice(lower, 0, 1) == "x" then
    t = 0
  else
    t = J.tonumber(lower)
  end
  if out == nil then return t end
  J.emit(out, t)
end
