-- actionParams holds the parameters as strings.
local replicas = tonumber(actionParams["replicas"])
if replicas == nil or replicas < 0 then
  error("invalid number of replicas: " .. tostring(actionParams["replicas"]), 0)
end
obj.spec.replicas = replicas
return obj
