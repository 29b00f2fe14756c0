-- Bundled override of the built-ins knative-service and inferenceservice
-- (scripts.go shares it): the queue-proxy sidecar Knative's revision
-- reconciler appends to every revision pod, which neither a Service's
-- revision template nor an InferenceService's component lists. A Karta path
-- that added it would make the template (or the fragments) unwritable, so
-- GetPodSpecs alone adds it here; revisions still write what the user owns.
--
-- knative/serving pkg/reconciler/revision/resources: deploy.go
-- makePodSpec appends the container made by queue.go makeQueueContainer
-- after the user's containers: name queue-proxy, the image of the cluster's
-- config-deployment (queue-sidecar-image, which the object does not hold:
-- left out here), and the resources of createQueueResources:
-- * requests.cpu: config-deployment's queue-sidecar-cpu-request, 25m by
--   default (pkg/deployment/config.go QueueSidecarCPURequestDefault);
--   nothing else, nor limits, while the feature queueproxy.resource-defaults
--   is disabled (its default);
-- * the revision's annotations replace each value:
--   queue.sidecar.serving.knative.dev/cpu-resource-request,
--   memory-resource-request, ephemeral-storage-resource-request and the
--   -limit ones; the webhook refuses one that is not a quantity
--   (revision_validation.go).
-- A cluster whose config-deployment sets other values, and the deprecated
-- resource-percentage annotation (a share of the user container's
-- resources, clamped), are not read: karta sees the object alone.
--
-- A Knative Service: the revision's annotations are its template's.
-- An InferenceService (KServe) makes a Knative Service per component only
-- in Serverless mode (also spelled Knative): the mode recorded in
-- .status.deploymentMode, else the serving.kserve.io/deploymentMode
-- annotation, else the cluster default, Serverless as KServe ships it
-- (pkg/controller/v1beta1/inferenceservice/utils/utils.go
-- GetDeploymentMode; config/configmap/inferenceservice.yaml). The
-- revision's annotations are the InferenceService's, then the component's
-- (components/predictor.go buildPredictorResources, buildObjectMeta; the
-- ServingRuntime's own annotations are not read). The sidecar joins the
-- component's containers fragment, after the main container.

local prefix = "queue.sidecar.serving.knative.dev/"

-- queueResources are the queue-proxy's resources for a revision whose
-- template has these annotations.
local function queueResources(annotations)
  annotations = annotations or {}
  local requests, limits = {cpu = "25m"}, nil
  for _, r in ipairs({"cpu", "memory", "ephemeral-storage"}) do
    local req = annotations[prefix .. r .. "-resource-request"]
    if type(req) == "string" and req ~= "" then requests[r] = req end
    local lim = annotations[prefix .. r .. "-resource-limit"]
    if type(lim) == "string" and lim ~= "" then
      limits = limits or {}
      limits[r] = lim
    end
  end
  return {requests = requests, limits = limits}
end

local function queueProxy(annotations)
  return {name = "queue-proxy", resources = queueResources(annotations)}
end

local serverless = {Serverless = true, Knative = true}

-- knativeMode reports whether KServe deploys this InferenceService's
-- components as Knative Services.
local function knativeMode(obj)
  local mode = obj.status and obj.status.deploymentMode
  if type(mode) == "string" and mode ~= "" then return serverless[mode] == true end
  local annotations = obj.metadata and obj.metadata.annotations or {}
  mode = annotations["serving.kserve.io/deploymentMode"]
  if mode == "Serverless" or mode == "Knative" then return true end
  if mode == "RawDeployment" or mode == "Standard" or mode == "ModelMesh" then return false end
  return true
end

-- merged is a's keys, then b's over them.
local function merged(a, b)
  local out = {}
  for k, v in pairs(a or {}) do out[k] = v end
  for k, v in pairs(b or {}) do out[k] = v end
  return out
end

function GetPodSpecs(obj)
  local items = karta.generated.GetPodSpecs(obj)
  if obj.kind == "InferenceService" then
    if not knativeMode(obj) then return items end
    local own = obj.metadata and obj.metadata.annotations
    for _, it in ipairs(items) do
      local f = it.fragmented
      if f then
        f.containers = f.containers or {}
        f.containers[#f.containers + 1] = queueProxy(merged(own, f.annotations))
      end
    end
    return items
  end
  for _, it in ipairs(items) do
    local tpl = it.component == "revision" and it.podTemplateSpec
    local containers = tpl and tpl.spec and tpl.spec.containers
    if containers then
      containers[#containers + 1] = queueProxy(tpl.metadata and tpl.metadata.annotations)
    end
  end
  return items
end
