-- .spec.replicatedJobs[]?.name
Q[1] = function(v, out)
  local spec = J.index(v, "spec")
  local replicatedJobs = J.index(spec, "replicatedJobs")
  for _, x in J.each_opt(replicatedJobs) do
    local name = J.index(x, "name")
    J.emit(out, name)
  end
end
