package interpreter

import "context"

// hookLoad names the running of a Program's scripts' top-level code in
// CheckLoad's errors; it is not a hook a script can define.
const hookLoad Hook = "load"

// CheckLoad runs the top-level code of the Karta's spec.luaScript and
// scripts once, under the call limits, as every call of a hook they
// define does before it: a script whose top level raises an error or runs
// into a limit (a loop) fails every such call, and CheckLoad says so when
// the Karta is compiled rather than when a hook first runs. The error
// names the Karta and "load" as the hook (a *luaapi.LimitError for a
// limit). An Argo CD health script's top level is its hook, which needs
// an object: it is not run. nil when there is nothing to run: no script,
// or only top levels that define functions and constants, which cannot
// fail (and then the Lua side is not built before a call needs it).
func (p *Program) CheckLoad(ctx context.Context) error {
	run := false
	for _, o := range p.overrides {
		run = run || (!o.argo && !o.definesOnly)
	}
	if !run {
		return nil
	}
	return p.withState(ctx, hookLoad, func(ctx context.Context, sd *stateData) error {
		_, err := sd.loadOverrides(ctx)
		return err
	})
}
