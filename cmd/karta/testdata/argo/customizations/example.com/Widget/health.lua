-- example.com's Widget is healthy when every gear turns. This exact folder
-- wins over the _/Widget wildcard folder.
local gears = (obj.status and obj.status.gears) or {}
local turning = 0
for _, g in ipairs(gears) do
  if g.turning then
    turning = turning + 1
  end
end
local total = table.getn(gears)
if total > 0 and turning == total then
  return {status = "Healthy", message = "All " .. total .. " gears turning"}
end
return {status = "Degraded", message = turning .. " of " .. total .. " gears turning"}
