package apisurface

// publicByDesign are the exported identifiers that no other package of the
// module uses, with the reason an embedder needs them.
var publicByDesign = map[string]string{
	"argo.Statuses": "lists the values of Health.Status",

	"cluster.DefaultReviseAttempts": "documents the default of Revise's attempts",
	"cluster.FieldManager":          "the field manager karta's writes carry in managedFields",
	"cluster.ResourceInterfaceKind": "the legacy kind's name, for callers that list both",
	"cluster/clustertest.Server":    "the URL a test's fake cluster answers on",

	"isolation.KindWorker":          "the limit kind of a worker that died of no limit it names, for callers that branch on LimitError.Kind",
	"isolation.DefaultMaxCPU":       "documents the default of Options.MaxCPU",
	"isolation.DefaultStartTimeout": "documents the default of Options.StartTimeout",
	"isolation.DefaultIdleTimeout":  "documents the default of Options.IdleTimeout",
	"isolation.DefaultBackoff":      "documents the default of Options.Backoff",
	"isolation.DefaultMaxBackoff":   "documents the default of Options.MaxBackoff",
	"isolation.DefaultCrashLoop":    "documents the default of Options.CrashLoop",

	"controller.FieldManager":             "the field manager the controller's writes carry in managedFields",
	"controller.DefaultResyncPeriod":      "documents the default of Options.ResyncPeriod",
	"controller.LegacyResource":           "the legacy resource the controller also watches",
	"controller.ConditionEvaluating":      "a condition type a Karta's status carries, read by users and automation",
	"controller.ReasonCompiled":           "a reason a Karta's conditions carry, read by users and automation",
	"controller.ReasonCompileFailed":      "a reason a Karta's conditions carry, read by users and automation",
	"controller.ReasonConflict":           "a reason a Karta's conditions carry, read by users and automation",
	"controller.ReasonLimitExceeded":      "a reason a Karta's conditions carry, read by users and automation",
	"controller.ReasonNotAccepted":        "a reason a Karta's conditions carry, read by users and automation",
	"controller.ReasonCRDNotServed":       "a reason a Karta's conditions carry, read by users and automation",
	"controller.ReasonCRDUnreadable":      "a reason a Karta's conditions carry, read by users and automation",
	"controller.ReasonSchemaMatches":      "a reason a Karta's conditions carry, read by users and automation",
	"controller.ReasonWithinLimits":       "a reason a Karta's conditions carry, read by users and automation",
	"controller.ReasonScriptFailed":       "a reason a Karta's conditions carry, read by users and automation",
	"controller.DefaultWatchFailureBound": "documents the default of Options.WatchFailureBound",

	"karmada.CustomizationKind": "the kind of the documents Load reads and Export writes",

	// Kubernetes API conventions for a CRD's Go types.
	"karta.AddToScheme":   "the API package's scheme registration, by Kubernetes convention",
	"karta.SchemeBuilder": "the API package's scheme registration, by Kubernetes convention",
	"karta.KartaList":     "the list type of the CRD, by Kubernetes convention",
	"karta.Resource":      "the GroupResource helper of an API package, by Kubernetes convention",
	"karta.LegacyGroup":   "the legacy API group Kartas may still use",
	"karta.IsKartaGVK":    "tells a Karta document from others in a mixed stream",
	// Loading untrusted Kartas with other caps.
	"karta.LoadOptions":             "loading Kartas under other size and depth caps",
	"karta.LoadWithOptions":         "loading Kartas under other size and depth caps",
	"karta.LoadReader":              "loading Kartas from a stream (standard input, a request body) with its size cap",
	"karta.DefaultMaxBytes":         "documents the default of LoadOptions.MaxBytes",
	"karta.DefaultMaxDepth":         "documents the default of LoadOptions.MaxDepth",
	"karta.DefaultMaxValues":        "documents the default of LoadOptions.MaxValues",
	"karta.DefaultMaxDocuments":     "documents the default of LoadOptions.MaxDocuments",
	"karta.DefaultMessageFieldName": "the CRD's default of conditionsDefinition.messageFieldName",

	// The limits' defaults, which Limits.WithDefaults applies.
	"luaapi.DefaultCallStackSize":   "documents a default of Limits",
	"luaapi.DefaultMaxInstructions": "documents a default of Limits",
	"luaapi.DefaultMaxMemory":       "documents a default of Limits",
	"luaapi.DefaultMaxStringSize":   "documents a default of Limits",
	"luaapi.DefaultStackSize":       "documents a default of Limits",

	"object.MaxDepth":     "the nesting cap Decode applies, beside MaxBytes",
	"object.MaxValues":    "the value cap Decode applies before decoding, beside MaxBytes",
	"object.MaxDocuments": "the document cap Decode applies before decoding, beside MaxBytes",

	"gangoutput.DefaultRediscoverPeriod": "documents the default of Options.RediscoverPeriod",
	"gangoutput.DefaultResyncPeriod":     "documents the default of Options.ResyncPeriod",
	"gangoutput.DefaultWorkers":          "documents the default of Options.Workers",
	"gangoutput.KubernetesKinds":         "documents which kinds are off unless their Karta switches them on",
	"gangoutput.ReasonDeleted":           "an event reason on workloads, read by users and automation",
	"gangoutput.ReasonFailed":            "an event reason on workloads, read by users and automation",
	"gangoutput.ReasonLeftAlone":         "an event reason on workloads, read by users and automation",

	"exporter.DefaultRediscoverPeriod": "documents the default of Options.RediscoverPeriod",
	"exporter.DefaultResyncPeriod":     "documents the default of Options.ResyncPeriod",
	"exporter.DefaultWorkers":          "documents the default of Options.Workers",
	"exporter.SchemaVersion":           "the version of the series' interface a dashboard or alert is written against (docs/metrics.md)",
	"exporter.Statuses":                "the values of karta_workload_status' status label, for an embedder's own queries",

	"podgroups.Build":                       "the pure builder a controller or an admission webhook calls with the GangResult it holds",
	"podgroups.Input":                       "Build's argument",
	"podgroups.GroupAnnotation":             "a key the built objects carry, to find them by group",
	"podgroups.VolcanoQueueAnnotation":      "the workload annotation Volcano's queue is read from",
	"podgroups.KAISkipPodGrouperAnnotation": "the pod annotation that keeps KAI's podgrouper off a pod linked to an external PodGroup",

	"webhook.PatchTypeJSONPatch": "the patch type of a response, the one Karmada accepts",
	"webhook.StatsBackend":       "a Backend that reports its pool to the handler's gauges",
}
