-- (.replicas // 1) * (.template.spec.parallelism // 1)
Q[1] = function(v, out)
  local template = J.index(v, "template")
  local spec = J.index(template, "spec")
  local parallelism = J.index(spec, "parallelism")
  if parallelism == NULL or parallelism == false then
    parallelism = 1
  end
  local replicas = J.index(v, "replicas")
  if replicas == NULL or replicas == false then
    replicas = 1
  end
  local t = J.times(replicas, parallelism)
  J.emit(out, t)
end
