local actions = {}
actions["create-job"] = {["iconClass"] = "fa fa-fw fa-play", ["displayName"] = "Create Job"}
return actions
