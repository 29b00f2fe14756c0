-- A Gadget script with mistakes on purpose, to show how failures print.
if obj.spec.mood == "fine" then
  return {status = "Fine", message = "Fine is not an Argo CD word: Argo CD reads Unknown"}
end
local spinning = obj.status.spinning -- fails when there is no status
if spinning then
  return {status = "Healthy", message = "Spinning"}
end
return {status = "Progressing", message = "Not spinning yet"}
