// Package interpreter runs a Karta: it compiles the Karta's hooks once
// into a Program — Go algorithms over its jq paths, each path on the back
// end chosen for it — runs the Karta's Lua scripts on a pool of sandboxed
// gopher-lua states, and returns typed results.
//
// # Compile once, evaluate many
//
//	k, _ := karta.LoadFile("pytorchjob.yaml")   // karta.Load applies the CRD defaults
//	p, err := interpreter.Compile(k[0], interpreter.Options{})
//	st, err := p.InterpretStatus(ctx, obj)      // obj is an *unstructured.Unstructured
//
// Compile validates the Karta (a *karta.ValidationError lists every
// problem), builds the component model and the status plan over the
// Karta's checked jq expressions (each on its direct form, package
// jqdirect, or its gojq program, compiled once), and compiles every script
// — spec.luaScript and the Options.Scripts — into a prototype. Nothing is
// parsed or compiled on the evaluation path. A Program is immutable and
// safe for concurrent use; Registry maps GVKs to Programs and swaps them
// atomically.
//
// # Hooks
//
// InterpretStatus (the status plan, matcher by matcher), GetPodSpecs,
// ReviseSpec, GetGangGroups, Suspend and Resume are Go algorithms
// (instances and zipping, placement, minimum members, merge-patch writes)
// run on one evaluator per call. `karta compile` (Program.Source) prints
// each as the Lua call it is, with the paths it evaluates.
//
// A script may define any hook; the generated one stays reachable as
// karta.generated.<Hook>, the same Go algorithm, charged to the script's
// call. When no script overrides a hook, the Go API runs its algorithm
// directly (no Lua state, no Lua tables); when one does, the script gets
// the object as real Lua tables with JSON semantics and its result is
// checked against the hook's shape.
//
// # Aliasing
//
// Results hold the input object's own Go values wherever they are unchanged
// parts of it — the pod templates of GetPodSpecs, the untouched subtrees of
// a revised object — not copies. Callers must not mutate them; copy first
// (runtime.DeepCopyJSONValue) when they need to. Input objects are never
// mutated.
//
// # Limits and errors
//
// Every call runs under Limits: a deadline measured from the start of the
// call's own run (waiting for a pooled state is not charged), an
// instruction budget, a call-depth limit and string-size caps. Crossing one
// returns a *luaapi.LimitError naming the Karta, the hook and the limit;
// other failures are *HookError. A state whose call hit a limit, panicked
// or raised a Lua error is discarded; one whose call karta's own Go code
// refused (a revision that cannot be written, an object of the wrong
// shape) leaves nothing behind and goes back to the pool. Program.LimitStats counts the calls that ended on one of the
// Program's own limits, with the last such error, for adapters to report.
package interpreter
