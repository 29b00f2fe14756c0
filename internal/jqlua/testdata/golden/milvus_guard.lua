-- select(.spec.mode == "cluster") | "querynode"
Q[1] = function(v, out)
  local spec = type(v) == "table" and v.spec or J.field(v, "spec")
  local mode = type(spec) == "table" and spec.mode or J.field(spec, "mode")
  if mode == "cluster" then J.emit(out, "querynode") end
end
