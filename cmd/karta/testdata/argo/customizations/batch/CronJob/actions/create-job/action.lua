-- A new-style action: it returns the resources to create, here a Job made
-- from the CronJob's template, named after the CronJob and the time.
local os = require("os")
local job = {}
job.apiVersion = "batch/v1"
job.kind = "Job"
job.metadata = {}
job.metadata.name = obj.metadata.name .. "-" .. os.time()
job.metadata.namespace = obj.metadata.namespace
job.metadata.annotations = {["cronjob.kubernetes.io/instantiate"] = "manual"}
local owner = {}
owner.apiVersion = obj.apiVersion
owner.kind = obj.kind
owner.name = obj.metadata.name
owner.uid = obj.metadata.uid
job.metadata.ownerReferences = {owner}
job.spec = obj.spec.jobTemplate.spec
return {{operation = "create", resource = job}}
