-- An elastic PyTorchJob keeps running when it loses workers, and the
-- training operator still says Running. Call that Degraded.
function InterpretStatus(obj)
  local r = karta.generated.InterpretStatus(obj)
  local rs = obj.status and obj.status.replicaStatuses
  local failed = rs and rs.Worker and rs.Worker.failed or 0
  if r.status == "Running" and failed > 0 then
    r.status = "Degraded"
    table.insert(r.matched, 1, "Degraded") -- Degraded precedes Running
  end
  return r
end
