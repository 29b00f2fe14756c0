-- Health of an Argo Rollouts style Rollout, written for karta's tests.
local spec, status = obj.spec or {}, obj.status
if status == nil then
  return {status = "Progressing", message = "Waiting for the controller to report a status"}
end

-- Rollouts reports observedGeneration as a string: compare spellings.
local generation = obj.metadata.generation
if generation ~= nil and tostring(status.observedGeneration) ~= tostring(generation) then
  return {status = "Progressing", message = "Waiting for the controller to observe generation " .. generation}
end

for _, c in ipairs(status.conditions or {}) do
  if c.type == "InvalidSpec" and c.status == "True" then
    return {status = "Degraded", message = c.message or "The rollout's spec is invalid"}
  end
end

local pauses = table.getn(status.pauseConditions or {})
if spec.paused or pauses > 0 then
  return {status = "Suspended", message = "Rollout is paused (" .. pauses .. " pause condition(s))"}
end

local want, available = spec.replicas or 1, status.availableReplicas or 0
if available < want then
  return {status = "Progressing", message = string.format("%d of %d replicas available", available, want)}
end
return {status = "Healthy", message = string.format("All %d replicas available", want)}
