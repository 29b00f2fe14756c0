package controller

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/isolation"
	"github.com/kartalua/karta/luaapi"
)

// spinningKarta's InterpretStatus never returns.
const spinningKarta = hostileKarta + `  luaScript: |
    function InterpretStatus(obj)
      while true do end
    end
`

// A Karta whose calls kill their workers (here the kernel's CPU limit:
// the workers run without an instruction limit or deadline) says so in
// its Evaluating condition, through Options.LimitStats.
func TestWorkerFailuresOnTheKarta(t *testing.T) {
	sup, err := isolation.NewSupervisor(isolation.Options{MaxCPU: time.Second,
		Compile: interpreter.Options{Limits: interpreter.Limits{MaxInstructions: -1, Timeout: -1}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sup.Close() })
	reg := interpreter.NewRegistry()
	f := newFakeCluster(textKarta(t, spinningKarta, "hostile", t0))
	c := startController(t, f, reg, Options{LimitInterval: time.Hour, LimitStats: sup.LimitStats})
	f.waitCondition(t, "hostile", ConditionEvaluating, metav1.ConditionTrue, ReasonWithinLimits)

	p, ok := reg.Get(batchRunGVK)
	require.True(t, ok)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = sup.Program(p).InterpretStatus(ctx, readYAML(t, batchRunObject))
	var we *isolation.WorkerError
	require.ErrorAs(t, err, &we)
	var le *luaapi.LimitError
	require.ErrorAs(t, err, &le)

	c.checkLimits()
	f.waitMessage(t, "hostile", ConditionEvaluating, metav1.ConditionFalse, ReasonLimitExceeded,
		`1 evaluation ended on a limit in the last 1h0m0s; the last: karta "hostile": InterpretStatus: deadline CPU time 1s (the worker's RLIMIT_CPU) exceeded`)
	assert.Zero(t, p.LimitStats().Count, "the Program in process ran nothing")
}
