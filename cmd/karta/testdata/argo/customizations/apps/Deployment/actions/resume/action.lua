obj.spec.paused = nil
return obj
