-- A Backup is healthy while its last successful run is younger than
-- spec.maxAgeHours. It reads the clock with require("os") and counts runs
-- with table.getn.
local os = require("os")

-- epoch reads an RFC 3339 UTC time such as 2020-03-01T12:00:00Z as
-- seconds since 1970. os.time takes a date table as local time, so the
-- local offset from UTC is measured and added back.
local function epoch(ts)
  local y, mo, d, h, mi, s = string.match(ts, "^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)Z$")
  if y == nil then
    return nil
  end
  local now = os.time()
  local offset = now - os.time(os.date("!*t", now))
  local t = {year = tonumber(y), month = tonumber(mo), day = tonumber(d),
             hour = tonumber(h), min = tonumber(mi), sec = tonumber(s)}
  return os.time(t) + offset
end

if obj.spec == nil or obj.spec.schedule == nil then
  return {status = "Unknown", message = "Backup has no schedule"}
end
local status = obj.status or {}
local runs = table.getn(status.runs or {})
if status.lastSuccessfulTime == nil then
  return {status = "Progressing", message = "No successful backup yet, " .. runs .. " run(s) recorded"}
end
local last = epoch(status.lastSuccessfulTime)
if last == nil then
  return {status = "Degraded", message = "Cannot read lastSuccessfulTime " .. status.lastSuccessfulTime}
end
local maxAgeHours = obj.spec.maxAgeHours or 24
local day = os.date("!%Y-%m-%d", last)
if os.time() - last > maxAgeHours * 3600 then
  return {status = "Degraded", message = "Last successful backup on " .. day .. " is older than " .. maxAgeHours .. "h"}
end
return {status = "Healthy", message = "Last successful backup on " .. day .. ", " .. runs .. " run(s) kept"}
