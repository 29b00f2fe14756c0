-- Bundled override of the built-ins raycluster, rayjob and rayservice
-- (scripts.go shares it): the containers KubeRay adds to the head pod, which
-- the head template as written does not list. A Karta path that added them
-- would make the template unwritable, so GetPodSpecs alone adds them here;
-- revisions still write the head template the user owns.
--
-- * enableInTreeAutoscaling: true → the autoscaler sidecar, appended last
--   (kuberay ray-operator/controllers/ray/common/pod.go DefaultHeadPodTemplate,
--   BuildAutoscalerContainer, mergeAutoscalerOverrides): name autoscaler, the
--   head's image (its first container's) unless autoscalerOptions.image,
--   imagePullPolicy IfNotPresent unless autoscalerOptions.imagePullPolicy,
--   requests = limits = cpu 500m, memory 512Mi unless
--   autoscalerOptions.resources.
-- * A RayJob in SidecarMode → the submitter container, appended to the head
--   template before the RayCluster is made (rayjob_controller.go
--   constructRayClusterForRayJob, getSubmitterContainer,
--   common/job.go GetDefaultSubmitterContainer): name ray-job-submitter, the
--   head's image, requests cpu 500m, memory 200Mi, limits cpu 1, memory 1Gi;
--   spec.submitterPodTemplate is ignored in this mode.
--
-- Only the fields a scheduler reads are given; KubeRay's commands,
-- environment and volume mounts are left out.

local function clusterSpec(obj)
  local spec = obj.spec or {}
  if obj.kind == "RayJob" then return spec.rayClusterSpec end
  if obj.kind == "RayService" then return spec.rayClusterConfig end
  return spec
end

local function submitter(image)
  return {
    name = "ray-job-submitter",
    image = image,
    resources = {limits = {cpu = "1", memory = "1Gi"}, requests = {cpu = "500m", memory = "200Mi"}},
  }
end

local function autoscaler(cluster, image)
  local opts = cluster.autoscalerOptions or {}
  return {
    name = "autoscaler",
    image = opts.image or image,
    imagePullPolicy = opts.imagePullPolicy or "IfNotPresent",
    resources = opts.resources or {
      limits = {cpu = "500m", memory = "512Mi"},
      requests = {cpu = "500m", memory = "512Mi"},
    },
  }
end

function GetPodSpecs(obj)
  local items = karta.generated.GetPodSpecs(obj)
  local cluster = clusterSpec(obj)
  if cluster == nil then return items end
  local sidecar = obj.kind == "RayJob" and obj.spec.submissionMode == "SidecarMode"
  local scaling = cluster.enableInTreeAutoscaling == true
  if not sidecar and not scaling then return items end
  for _, it in ipairs(items) do
    local spec = it.component == "head" and it.podTemplateSpec and it.podTemplateSpec.spec
    local containers = spec and spec.containers
    if containers and containers[1] then
      local image = containers[1].image
      if sidecar then containers[#containers + 1] = submitter(image) end
      if scaling then containers[#containers + 1] = autoscaler(cluster, image) end
    end
  end
  return items
end
