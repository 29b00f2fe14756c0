-- .spec.predictor | first((.model | select(. != null)), (.[]? | select(type == "object" and has("storageUri"))), .model)
do
  local function first(v)
    local model = type(v) == "table" and v.model or J.field(v, "model")
    if model ~= NULL then
      do return model end
    end
    for _, x in J.each_opt(v) do
      if J.type(x) == "object" and J.has(x, "storageUri") then
        do return x end
      end
    end
    do return model end
  end
  Q[1] = function(v, out)
    local spec = type(v) == "table" and v.spec or J.field(v, "spec")
    local predictor = type(spec) == "table" and spec.predictor or J.field(spec, "predictor")
    local first_2 = first(predictor)
    if first_2 ~= nil then J.emit(out, first_2) end
  end
end
