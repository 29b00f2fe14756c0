-- .spec.services // {} | keys[]
Q[1] = function(v, out)
  local spec = type(v) == "table" and v.spec or J.field(v, "spec")
  local services = type(spec) == "table" and spec.services or J.field(spec, "services")
  if services == NULL or services == false then services = J.object() end
  local keys = J.keys(services)
  for _, x in J.each(keys) do
    J.emit(out, x)
  end
end
