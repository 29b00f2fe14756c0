-- .spec.image.repository + ":" + .spec.image.tag
Q[1] = function(v, out)
  local spec = type(v) == "table" and v.spec or J.field(v, "spec")
  local image = type(spec) == "table" and spec.image or J.field(spec, "image")
  local tag = type(image) == "table" and image.tag or J.field(image, "tag")
  local repository = type(image) == "table" and image.repository or J.field(image, "repository")
  local t_2 = J.plus_string(J.plus_string(repository, ":"), tag)
  if out == nil then return t_2 end
  J.emit(out, t_2)
end
