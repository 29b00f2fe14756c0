-- .spec.replicatedJobs[]?.name
Q[1] = function(v, out)
  local spec = type(v) == "table" and v.spec or J.field(v, "spec")
  local replicatedJobs = type(spec) == "table" and spec.replicatedJobs or J.field(spec, "replicatedJobs")
  for _, x in J.each_opt(replicatedJobs) do
    local name = type(x) == "table" and x.name or J.field(x, "name")
    J.emit(out, name)
  end
end
