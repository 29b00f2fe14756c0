-- .spec.image.repository + ":" + .spec.image.tag
Q[1] = function(v, out)
  local spec = J.index(v, "spec")
  local image = J.index(spec, "image")
  local tag = J.index(image, "tag")
  local spec_2 = J.index(v, "spec")
  local image_2 = J.index(spec_2, "image")
  local repository = J.index(image_2, "repository")
  local t = J.plus(repository, ":")
  local t_2 = J.plus(t, tag)
  J.emit(out, t_2)
end
