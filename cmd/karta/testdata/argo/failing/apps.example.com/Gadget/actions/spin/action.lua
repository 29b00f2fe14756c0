obj.spec.speed = tonumber(actionParams["speed"] or "1")
return obj
