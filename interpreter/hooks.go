package interpreter

// Hook is the name of a Lua hook function (docs/karta.md, "Hooks").
type Hook string

// The hooks a Karta compiles to, and Karmada's operations.
const (
	HookGetPodSpecs     Hook = "GetPodSpecs"
	HookInterpretStatus Hook = "InterpretStatus"
	HookReviseSpec      Hook = "ReviseSpec"
	HookGetGangGroups   Hook = "GetGangGroups"
	HookSuspend         Hook = "Suspend"
	HookResume          Hook = "Resume"
	HookGetReplicas     Hook = "GetReplicas"
	HookGetComponents   Hook = "GetComponents"
	HookReviseReplica   Hook = "ReviseReplica"
	HookRetain          Hook = "Retain"
	HookAggregateStatus Hook = "AggregateStatus"
	HookReflectStatus   Hook = "ReflectStatus"
	HookInterpretHealth Hook = "InterpretHealth"
	HookGetDependencies Hook = "GetDependencies"
)

// hooks lists every hook name, in the order of the table in docs/karta.md.
var hooks = []Hook{
	HookGetPodSpecs, HookInterpretStatus, HookReviseSpec, HookGetGangGroups,
	HookSuspend, HookResume, HookGetReplicas, HookGetComponents,
	HookReviseReplica, HookRetain, HookAggregateStatus, HookReflectStatus,
	HookInterpretHealth, HookGetDependencies,
}

// IsHook reports whether name is a hook name.
func IsHook(name string) bool {
	for _, h := range hooks {
		if string(h) == name {
			return true
		}
	}
	return false
}
