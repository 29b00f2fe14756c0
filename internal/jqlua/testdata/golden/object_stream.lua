-- {name: .metadata.name, port: (.spec.ports[]?.port // "none")}
Q[1] = function(v, out)
  local metadata = type(v) == "table" and v.metadata or J.field(v, "metadata")
  local name = type(metadata) == "table" and metadata.name or J.field(metadata, "name")
  local function k(x)
    J.emit(out, J.object_of({name = name, port = x}))
  end
  local found = {}
  local spec = type(v) == "table" and v.spec or J.field(v, "spec")
  local ports = type(spec) == "table" and spec.ports or J.field(spec, "ports")
  for _, x_2 in J.each_opt(ports) do
    local port = type(x_2) == "table" and x_2.port or J.field(x_2, "port")
    if port ~= NULL and port ~= false then
      found[1] = true
      k(port)
    end
  end
  if not found[1] then k("none") end
end
