package interpreter

import (
	"context"

	"github.com/kartalua/karta/internal/third_party/gojq"
	"github.com/kartalua/karta/luaapi"
)

// What ReviseSpec's Go algorithm spends on a revision, on the high side,
// charged before the first revision runs: each revision builds the
// PodTemplateSpec view of every instance it names, applies its patch (a
// merge decodes and walks every value of the patch and of the view) and
// diffs the result against the view. Measured on PyTorchJob's examples on
// a loaded machine: 7–15 µs a revision and 6–9 µs a value of a patch —
// some 500 and 300 Lua instructions' time (one step each, about 27 ns) —
// and about 500 bytes a value on the way (copies of the view's maps, the
// written values, the diff). Uncharged, 20,000 revisions took 2 s of CPU
// and ended on no limit (karta studio found it).
const (
	revisionSteps      = 1024
	revisionValueSteps = 320
	revisionValueBytes = 512
)

// reviseCost is what revs will cost: revisionSteps each, and the values
// of their patches, counted each time a value is reached (a patch's
// subtrees may be shared). The count stops at stop values, where the
// charge has anyway passed any budget.
func reviseCost(revs []Revision, stop int64) (steps, bytes int64) {
	var values int64
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if values++; values > stop || depth >= luaapi.MaxDepth {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				bytes += int64(len(k))
				walk(e, depth+1)
			}
		case []any:
			for _, e := range x {
				walk(e, depth+1)
			}
		case string:
			bytes += int64(len(x))
		}
	}
	for i := range revs {
		walk(revs[i].Patch, 0)
	}
	return int64(len(revs))*revisionSteps + values*revisionValueSteps, bytes + values*revisionValueBytes
}

// chargeRevisions charges revs to the call before any runs: to the call's
// evaluator dev (its budget and memory guard, eval_direct.go), or without
// one to the meter ctx is (a Lua call's context). A charge past a limit
// ends the call with that *luaapi.LimitError.
func (p *Program) chargeRevisions(ctx context.Context, dev *directEvaluator, revs []Revision) error {
	stop := p.limits.MaxInstructions / revisionValueSteps
	if stop <= 0 {
		stop = 1 << 62
	}
	steps, bytes := reviseCost(revs, stop)
	if dev != nil {
		return dev.charge(steps, bytes)
	}
	if m, ok := ctx.(gojq.Meter); ok {
		if err := m.ChargeSteps(steps); err != nil {
			return err
		}
		return m.ChargeMemory(bytes)
	}
	return nil
}
