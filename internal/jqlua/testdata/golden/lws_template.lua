-- .spec.leaderWorkerTemplate | (.leaderTemplate // .workerTemplate)
Q[1] = function(v, out)
  local spec = J.index(v, "spec")
  local leaderWorkerTemplate = J.index(spec, "leaderWorkerTemplate")
  local leaderTemplate = J.index(leaderWorkerTemplate, "leaderTemplate")
  if leaderTemplate == NULL or leaderTemplate == false then
    local workerTemplate = J.index(leaderWorkerTemplate, "workerTemplate")
    leaderTemplate = workerTemplate
  end
  J.emit(out, leaderTemplate)
end
