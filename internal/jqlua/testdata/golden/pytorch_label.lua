-- .metadata.labels["training.kubeflow.org/replica-type"]
Q[1] = function(v, out)
  local metadata = J.index(v, "metadata")
  local labels = J.index(metadata, "labels")
  local t = J.index(labels, "training.kubeflow.org/replica-type")
  J.emit(out, t)
end
