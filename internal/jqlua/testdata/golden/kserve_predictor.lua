-- .spec.predictor | first((.model | select(. != null)), (.[]? | select(type == "object" and has("storageUri"))), .model)
do
  local function first(v)
    local model = J.index(v, "model")
    if model ~= NULL then
      do return model end
    end
    for _, x in J.each_opt(v) do
      local typ = J.type(x)
      local b = false
      if typ == "object" then
        local has = J.has(x, "storageUri")
        b = has
      end
      if b then
        do return x end
      end
    end
    local model_2 = J.index(v, "model")
    do return model_2 end
  end
  Q[1] = function(v, out)
    local spec = J.index(v, "spec")
    local predictor = J.index(spec, "predictor")
    local first_2 = first(predictor)
    if first_2 ~= nil then
      J.emit(out, first_2)
    end
  end
end
