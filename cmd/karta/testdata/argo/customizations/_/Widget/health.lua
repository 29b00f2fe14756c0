-- Any group's Widget: "_" in a folder name is a wildcard. example.com has
-- a Widget folder of its own, which wins over this one.
if obj.status and obj.status.ready then
  return {status = "Healthy", message = "Widget is ready"}
end
return {status = "Progressing", message = "Waiting for the widget to become ready"}
