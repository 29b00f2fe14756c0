-- Health of a batch/v1 Job, written for karta's tests: the first true
-- terminal condition decides; otherwise the Job is suspended or running.
local status = obj.status or {}
for _, c in ipairs(status.conditions or {}) do
  if c.status == "True" then
    if c.type == "Complete" then
      return {status = "Healthy", message = c.message or "Job completed"}
    elseif c.type == "Failed" then
      return {status = "Degraded", message = (c.reason or "Failed") .. ": " .. (c.message or "Job failed")}
    end
  end
end
if obj.spec and obj.spec.suspend then
  return {status = "Suspended", message = "Job is suspended"}
end
return {
  status = "Progressing",
  message = string.format("%d pod(s) active, %d succeeded", status.active or 0, status.succeeded or 0),
}
