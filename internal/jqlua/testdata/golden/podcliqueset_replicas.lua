-- .spec.template | .cliques[]? as $c | $c.name as $n | ($c.spec.replicas // 1) * ([.podCliqueScalingGroups[]? | select((.cliqueNames - [$n] | length) < (.cliqueNames | length)) | .replicas // 1][0] // 1)
Q[1] = function(v, out)
  local spec = type(v) == "table" and v.spec or J.field(v, "spec")
  local template = type(spec) == "table" and spec.template or J.field(spec, "template")
  local cliques = type(template) == "table" and template.cliques or J.field(template, "cliques")
  for _, x in J.each_opt(cliques) do
    local name = type(x) == "table" and x.name or J.field(x, "name")
    local arr = J.array()
    local podCliqueScalingGroups = type(template) == "table" and template.podCliqueScalingGroups or J.field(template, "podCliqueScalingGroups")
    for _, x_2 in J.each_opt(podCliqueScalingGroups) do
      local cliqueNames = type(x_2) == "table" and x_2.cliqueNames or J.field(x_2, "cliqueNames")
      local len = J.length(cliqueNames)
      if J.lt(J.length(J.minus(cliqueNames, J.array_of({name}))), len) then
        local replicas = type(x_2) == "table" and x_2.replicas or J.field(x_2, "replicas")
        if replicas == NULL or replicas == false then replicas = 1 end
        arr[#arr + 1] = replicas
      end
    end
    local item = J.index(arr, 0)
    if item == NULL or item == false then item = 1 end
    local spec_2 = type(x) == "table" and x.spec or J.field(x, "spec")
    local replicas_2 = type(spec_2) == "table" and spec_2.replicas or J.field(spec_2, "replicas")
    if replicas_2 == NULL or replicas_2 == false then replicas_2 = 1 end
    J.emit(out, J.times(replicas_2, item))
  end
end
