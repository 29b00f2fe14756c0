-- Bundled override of the built-in sparkapplication: the main container
-- Spark builds for the driver and each executor, which the SparkApplication
-- does not spell out. Its image and requests are computed from several
-- fields (and defaults), which no Karta path can write back, so GetPodSpecs
-- alone adds them here; revisions still write the fields the user owns
-- (.spec.driver.image, .spec.executor.image, …).
--
-- What Spark (resource-managers/kubernetes BasicDriverFeatureStep,
-- BasicExecutorFeatureStep) and the operator's own request accounting
-- (kubeflow/spark-operator internal/scheduler/yunikorn/resourceusage:
-- cpuRequest, memoryRequestBytes, executorMemoryRequest) make of the spec:
-- * container spark-kubernetes-driver / spark-kubernetes-executor, image
--   .spec.driver.image // .spec.image (.spec.executor.image for executors);
-- * cpu request coreRequest, else cores, else 1; cpu limit coreLimit;
-- * memory request = limit = memory (Spark's default 1g) + memoryOverhead,
--   which defaults to max(factor × memory, 384Mi), factor
--   .spec.memoryOverheadFactor, else 0.1 for Java and Scala apps and 0.4
--   for the others (pkg/common DefaultJVMMemoryOverheadFactor,
--   DefaultNonJVMMemoryOverheadFactor, MinMemoryOverhead); executors add
--   spark.executor.pyspark.memory (Python apps) and spark.memory.offHeap.size
--   (when enabled) from sparkConf; floored to whole Mi as Spark writes it;
-- * gpu {name, quantity} as a limit.
-- Spark memory strings are binary (k, m, g, t, p, with or without a
-- trailing b); a bare number is MiB, as Spark reads spark.driver.memory.
-- The operator's accounting counts an unset memory as 0; Spark starts the
-- JVM with 1g, which is what the pod requests.

local MiB = 1024 * 1024
local units = {b = 1, k = 1024, kb = 1024, m = MiB, mb = MiB, g = 1024 * MiB, gb = 1024 * MiB,
  t = 1024 * 1024 * MiB, tb = 1024 * 1024 * MiB, p = 1024 * 1024 * 1024 * MiB, pb = 1024 * 1024 * 1024 * MiB}

-- bytes parses a Spark memory string; nil when it is not one.
local function bytes(s, bareUnit)
  if type(s) ~= "string" then return nil end
  local n, unit = string.match(string.lower(s), "^(%d+)(%a*)$")
  if n == nil then return nil end
  if unit == "" then unit = bareUnit end
  local m = units[unit]
  if m == nil then return nil end
  return tonumber(n) * m
end

local function memoryRequest(app, role, extra)
  local spec = app.spec
  local memory = bytes(role.memory, "m") or 1024 * MiB
  local overhead = bytes(role.memoryOverhead, "m")
  if overhead == nil then
    local factor = tonumber(spec.memoryOverheadFactor or "")
    if factor == nil then
      factor = (spec.type == "Java" or spec.type == "Scala") and 0.1 or 0.4
    end
    overhead = math.max(memory * factor, 384 * MiB)
  end
  return math.floor((memory + overhead + extra) / MiB) .. "Mi"
end

local function executorExtra(app)
  local conf = app.spec.sparkConf or {}
  local extra = 0
  if app.spec.type == "Python" then
    extra = extra + (bytes(conf["spark.executor.pyspark.memory"], "m") or 0)
  end
  if conf["spark.memory.offHeap.enabled"] == "true" then
    extra = extra + (bytes(conf["spark.memory.offHeap.size"], "b") or 0)
  end
  return extra
end

local function resources(app, role, extra)
  local cpu = role.coreRequest or (role.cores ~= nil and tostring(role.cores)) or "1"
  local memory = memoryRequest(app, role, extra)
  local limits = {memory = memory}
  if role.coreLimit ~= nil then limits.cpu = role.coreLimit end
  if type(role.gpu) == "table" and role.gpu.name ~= nil and role.gpu.quantity ~= nil then
    limits[role.gpu.name] = role.gpu.quantity
  end
  return {requests = {cpu = cpu, memory = memory}, limits = limits}
end

function GetPodSpecs(obj)
  local items = karta.generated.GetPodSpecs(obj)
  local spec = obj.spec
  if spec == nil then return items end
  for _, it in ipairs(items) do
    local role, name, extra
    if it.component == "driver" then
      role, name, extra = spec.driver or {}, "spark-kubernetes-driver", 0
    elseif it.component == "executor" then
      role, name, extra = spec.executor or {}, "spark-kubernetes-executor", executorExtra(obj)
    end
    if role ~= nil and it.fragmented ~= nil then
      local f = it.fragmented
      f.container = f.container or {name = name}
      f.image = role.image or spec.image
      f.resources = resources(obj, role, extra)
    end
  end
  return items
end
