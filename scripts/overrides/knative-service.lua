-- Bundled override of the built-in knative-service: the queue-proxy sidecar
-- Knative's revision reconciler appends to every revision pod, which the
-- revision template does not list. A Karta path that added it would make
-- the template unwritable, so GetPodSpecs alone adds it here; revisions
-- still write the template the user owns.
--
-- knative/serving pkg/reconciler/revision/resources: deploy.go
-- makePodSpec appends the container made by queue.go makeQueueContainer
-- after the user's containers: name queue-proxy, the image of the cluster's
-- config-deployment (queue-sidecar-image, which the Service does not hold:
-- left out here), and the resources of createQueueResources:
-- * requests.cpu: config-deployment's queue-sidecar-cpu-request, 25m by
--   default (pkg/deployment/config.go QueueSidecarCPURequestDefault);
--   nothing else, nor limits, while the feature queueproxy.resource-defaults
--   is disabled (its default);
-- * the revision's annotations (the template's) replace each value:
--   queue.sidecar.serving.knative.dev/cpu-resource-request,
--   memory-resource-request, ephemeral-storage-resource-request and the
--   -limit ones; the webhook refuses one that is not a quantity
--   (revision_validation.go).
-- A cluster whose config-deployment sets other values, and the deprecated
-- resource-percentage annotation (a share of the user container's
-- resources, clamped), are not read: karta sees the Service alone.

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

function GetPodSpecs(obj)
  local items = karta.generated.GetPodSpecs(obj)
  for _, it in ipairs(items) do
    local tpl = it.component == "revision" and it.podTemplateSpec
    local containers = tpl and tpl.spec and tpl.spec.containers
    if containers then
      containers[#containers + 1] = {
        name = "queue-proxy",
        resources = queueResources(tpl.metadata and tpl.metadata.annotations),
      }
    end
  end
  return items
end
