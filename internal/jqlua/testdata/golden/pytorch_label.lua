-- .metadata.labels["training.kubeflow.org/replica-type"]
Q[1] = function(v, out)
  local metadata = type(v) == "table" and v.metadata or J.field(v, "metadata")
  local labels = type(metadata) == "table" and metadata.labels or J.field(metadata, "labels")
  local t = type(labels) == "table" and labels["training.kubeflow.org/replica-type"] or J.field(labels, "training.kubeflow.org/replica-type")
  if out == nil then return t end
  J.emit(out, t)
end
