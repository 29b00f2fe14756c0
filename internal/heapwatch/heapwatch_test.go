package heapwatch

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

var sink []byte

// Measure sees a call's heap growth, and CPU time apart from waiting.
func TestMeasure(t *testing.T) {
	grow := Measure(func() { sink = make([]byte, 32<<20) })
	assert.GreaterOrEqual(t, grow.Growth, uint64(32<<20), "the live heap rose by the allocation")
	sink = nil

	sleep := Measure(func() { time.Sleep(300 * time.Millisecond) })
	assert.GreaterOrEqual(t, sleep.Wall, 300*time.Millisecond)
	assert.Less(t, sleep.CPU, sleep.Wall, "waiting costs no CPU")

	// Spin until the process has used 100 ms of CPU, however long a
	// loaded machine takes to give it (a wall-clock window would measure
	// the machine's load, not the spinning).
	if _, ok := ProcessCPU(); !ok {
		t.Skip("no process CPU time on this platform")
	}
	busy := Measure(func() {
		start, _ := ProcessCPU()
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
			if now, _ := ProcessCPU(); now-start >= 100*time.Millisecond {
				return
			}
		}
	})
	assert.GreaterOrEqual(t, busy.CPU, 100*time.Millisecond, "spinning costs CPU")
}
