-- The actions of an apps/v1 Deployment, written for karta's tests.
local actions = {}
actions["restart"] = {["iconClass"] = "fa fa-fw fa-redo"}
local paused = obj.spec.paused == true
actions["pause"] = {["disabled"] = paused, ["iconClass"] = "fa fa-fw fa-pause-circle"}
actions["resume"] = {["disabled"] = not paused, ["iconClass"] = "fa fa-fw fa-play-circle"}
actions["scale"] = {
  ["displayName"] = "Scale",
  ["params"] = {{["name"] = "replicas", ["type"] = "number", ["default"] = tostring(obj.spec.replicas)}},
}
return actions
