-- .spec.services // {} | keys[]
Q[1] = function(v, out)
  local spec = J.index(v, "spec")
  local services = J.index(spec, "services")
  if services == NULL or services == false then
    services = J.object()
  end
  local keys = J.keys(services)
  for _, x in J.each(keys) do
    J.emit(out, x)
  end
end
