-- .spec.leaderWorkerTemplate | (.leaderTemplate // .workerTemplate)
Q[1] = function(v, out)
  local spec = type(v) == "table" and v.spec or J.field(v, "spec")
  local leaderWorkerTemplate = type(spec) == "table" and spec.leaderWorkerTemplate or J.field(spec, "leaderWorkerTemplate")
  local leaderTemplate = type(leaderWorkerTemplate) == "table" and leaderWorkerTemplate.leaderTemplate or J.field(leaderWorkerTemplate, "leaderTemplate")
  if leaderTemplate == NULL or leaderTemplate == false then
    leaderTemplate = type(leaderWorkerTemplate) == "table" and leaderWorkerTemplate.workerTemplate or J.field(leaderWorkerTemplate, "workerTemplate")
  end
  if out == nil then return leaderTemplate end
  J.emit(out, leaderTemplate)
end
