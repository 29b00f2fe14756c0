-- A Karta override, not an Argo CD health script: it defines a hook and
-- does not end in return.
function InterpretStatus(obj)
  return karta.generated.InterpretStatus(obj)
end
