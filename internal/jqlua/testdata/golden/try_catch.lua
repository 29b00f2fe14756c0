-- try (.spec.replicas | tonumber) catch "bad: \(.)"
do
  local function try(v, out)
    local spec = type(v) == "table" and v.spec or J.field(v, "spec")
    local replicas = type(spec) == "table" and spec.replicas or J.field(spec, "replicas")
    out[#out + 1] = J.tonumber(replicas)
  end
  Q[1] = function(v, out)
    local outs, err = J.try(try, v)
    for i = 1, #outs do
      local x = outs[i]
      J.emit(out, x)
    end
    if err ~= nil then
      local t = "bad: " .. J.tostring(err)
      J.emit(out, t)
    end
  end
end
