package interpreter

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/luaapi"
)

// limitKarta is a Karta whose Running matcher is expr, with an optional
// luaScript.
func limitKarta(expr, script string) string {
	text := `apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: hostile}
spec:
  structureDefinition:
    rootComponent:
      name: hostile
      kind: {group: example.com, version: v1alpha1, kind: BatchRun}
      statusDefinition:
        statusMappings:
          running:
          - byExpression: {expression: '` + expr + `', expectedResult: "true"}
`
	if script != "" {
		text += "  luaScript: |\n"
		for _, line := range strings.Split(script, "\n") {
			text += "    " + line + "\n"
		}
	}
	return text
}

const limitObject = `apiVersion: example.com/v1alpha1
kind: BatchRun
metadata: {name: nightly, namespace: data}
status: {phase: Running}
`

func TestLimitStats(t *testing.T) {
	const loop = "function InterpretStatus(obj)\n  while true do end\nend"
	tests := []struct {
		name     string
		karta    string
		limits   Limits
		timeout  time.Duration // the caller's, 0 for none
		counted  bool
		kind     luaapi.LimitKind
		errorMsg string
	}{
		{name: "success", karta: limitKarta(".status.phase == \"Running\"", "")},
		{name: "a Lua error", karta: limitKarta("true", "function InterpretStatus(obj)\n  error(\"boom\")\nend"), errorMsg: "boom"},
		{name: "memory in jq", karta: limitKarta(`("x" * 100000000) | length > 0`, ""), counted: true, kind: luaapi.KindMemory},
		{name: "memory in a script's jq", karta: limitKarta("true",
			"function InterpretStatus(obj)\n  jq('(\"x\" * 100000000) | length', obj)\nend"), counted: true, kind: luaapi.KindMemory},
		{name: "instructions", karta: limitKarta("true", loop), limits: Limits{MaxInstructions: 100000, Timeout: time.Minute},
			counted: true, kind: luaapi.KindInstructions},
		{name: "the Program's deadline", karta: limitKarta("true", loop), limits: Limits{MaxInstructions: -1, Timeout: 50 * time.Millisecond},
			counted: true, kind: luaapi.KindDeadline},
		// The caller's deadline ends the call first: the caller's doing.
		{name: "the caller's deadline", karta: limitKarta("true", loop), limits: Limits{MaxInstructions: -1, Timeout: time.Minute},
			timeout: 50 * time.Millisecond, kind: luaapi.KindDeadline},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := progFrom(t, tt.karta, Options{Limits: tt.limits, PoolSize: 1})
			obj := progObj(t, limitObject)
			assert.Equal(t, LimitStats{}, p.LimitStats(), "nothing before the first call")

			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			before := time.Now()
			_, err := p.InterpretStatus(ctx, obj)
			st := p.LimitStats()
			switch {
			case tt.kind != "":
				var le *luaapi.LimitError
				require.ErrorAs(t, err, &le)
				assert.Equal(t, tt.kind, le.Kind)
			case tt.errorMsg != "":
				require.ErrorContains(t, err, tt.errorMsg)
			default:
				require.NoError(t, err)
			}
			if !tt.counted {
				assert.Equal(t, LimitStats{}, st)
				return
			}
			assert.EqualValues(t, 1, st.Count)
			require.NotNil(t, st.Last)
			assert.Equal(t, "hostile", st.Last.Karta)
			assert.Equal(t, string(HookInterpretStatus), st.Last.Hook)
			assert.Equal(t, tt.kind, st.Last.Kind)
			assert.Equal(t, err.Error(), st.Last.Error())
			assert.False(t, st.LastAt.Before(before))

			// A copy: changing it changes nothing.
			st.Last.Karta = "someone else"
			assert.Equal(t, "hostile", p.LimitStats().Last.Karta)
		})
	}
}

// Concurrent calls are all counted, and reading races with none of them.
func TestLimitStatsConcurrent(t *testing.T) {
	p := progFrom(t, limitKarta(`("x" * 100000000) | length > 0`, ""), Options{PoolSize: 4})
	good := progFrom(t, limitKarta(".status.phase == \"Running\"", ""), Options{PoolSize: 4})
	obj := progObj(t, limitObject)
	const goroutines, calls = 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, 2*goroutines*calls)
	for range goroutines {
		wg.Go(func() {
			for range calls {
				if _, err := p.InterpretStatus(context.Background(), obj); err == nil {
					errs <- fmt.Errorf("a hostile call succeeded")
				}
				if _, err := good.InterpretStatus(context.Background(), obj); err != nil {
					errs <- err
				}
				_ = p.LimitStats()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.EqualValues(t, goroutines*calls, p.LimitStats().Count)
	assert.Equal(t, LimitStats{}, good.LimitStats(), "another Program counts its own")
}
