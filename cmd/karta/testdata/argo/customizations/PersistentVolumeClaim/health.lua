-- A core-group kind's folder is named by the kind alone.
local phase = obj.status and obj.status.phase
if phase == "Bound" then
  return {status = "Healthy", message = "Bound to " .. obj.spec.volumeName}
elseif phase == "Lost" then
  return {status = "Degraded", message = "The bound volume is lost"}
end
return {status = "Progressing", message = "Waiting for a volume (phase " .. tostring(phase) .. ")"}
