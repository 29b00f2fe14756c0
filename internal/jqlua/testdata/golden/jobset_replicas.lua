-- (.replicas // 1) * (.template.spec.parallelism // 1)
Q[1] = function(v, out)
  local template = type(v) == "table" and v.template or J.field(v, "template")
  local spec = type(template) == "table" and template.spec or J.field(template, "spec")
  local parallelism = type(spec) == "table" and spec.parallelism or J.field(spec, "parallelism")
  if parallelism == NULL or parallelism == false then parallelism = 1 end
  local replicas = type(v) == "table" and v.replicas or J.field(v, "replicas")
  if replicas == NULL or replicas == false then replicas = 1 end
  local t = J.times(replicas, parallelism)
  if out == nil then return t end
  J.emit(out, t)
end
