-- Health of a Kyverno ClusterPolicy, written for karta's tests in the form
-- many Argo CD scripts take: the chunk ends in an if … else … end with a
-- return in each branch, not in a return of its own.
local hs = {}
local ready = nil
if obj.status ~= nil and obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Ready" then
      ready = c
    end
  end
end
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message or "Ready"
  return hs
else
  hs.status = "Progressing"
  if ready ~= nil and ready.message ~= nil then
    hs.message = ready.message
  else
    hs.message = "Waiting for the policy to be ready"
  end
  return hs
end
