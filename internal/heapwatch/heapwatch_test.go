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

	busy := Measure(func() {
		for start := time.Now(); time.Since(start) < 200*time.Millisecond; {
		}
	})
	assert.Greater(t, busy.CPU, 50*time.Millisecond, "spinning costs CPU")
}
