-- An override of InterpretStatus for BatchRun. The Karta maps the phase; the
-- controller also reports how many executors are making progress, which a
-- phase matcher cannot compare with the spec: a Running BatchRun with fewer
-- progressing executors than spec.executors.minAvailable is Degraded.
function InterpretStatus(obj)
  local r = karta.generated.InterpretStatus(obj)
  local progressing = obj.status and obj.status.progressingExecutors
  local need = obj.spec.executors and obj.spec.executors.minAvailable
  if r.status == "Running" and progressing and need and progressing < need then
    r.status = "Degraded"
    table.insert(r.matched, 1, "Degraded")
  end
  return r
end
