-- select(.spec.mode == "cluster") | "querynode"
Q[1] = function(v, out)
  local spec = J.index(v, "spec")
  local mode = J.index(spec, "mode")
  if mode == "cluster" then
    J.emit(out, "querynode")
  end
end
