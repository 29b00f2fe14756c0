-- {name: .metadata.name, port: (.spec.ports[]?.port // "none")}
Q[1] = function(v, out)
  local metadata = J.index(v, "metadata")
  local name = J.index(metadata, "name")
  local function k(x)
    local obj = J.object()
    obj.name = name
    obj.port = x
    J.emit(out, obj)
  end
  local found = {}
  local spec = J.index(v, "spec")
  local ports = J.index(spec, "ports")
  for _, x_2 in J.each_opt(ports) do
    local port = J.index(x_2, "port")
    if port ~= NULL and port ~= false then
      found[1] = true
      k(port)
    end
  end
  if not found[1] then
    k("none")
  end
end
