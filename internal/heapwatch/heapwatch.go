// Package heapwatch measures what a call costs the process, for the
// hostile-input suites: its wall time, the CPU time the process spent
// while it ran, and how far the live heap rose.
//
// A claim that a limit ends a call promptly is checked on CPU time: on a
// machine shared with other work (or under the race detector) a call's
// wall time stretches with the waiting, while the work it does — what a
// limit that does not hold would make unbounded — does not. Wall time is
// still returned, for a generous bound that catches a call that hangs.
package heapwatch

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/stretchr/testify/assert"
)

// Cost is what one call cost the process.
type Cost struct {
	// Wall is the call's wall time.
	Wall time.Duration
	// CPU is the user and system time of the whole process during the
	// call (the garbage collector's included); Wall where the platform
	// does not report it.
	CPU time.Duration
	// Growth is how far the live heap rose above where it was before.
	Growth uint64
}

// Measure runs f and returns its cost: the live heap is sampled every
// millisecond while f runs, after a garbage collection, so that the
// baseline is the live heap.
func Measure(f func()) Cost {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	base := read()
	peak := base
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				peak = max(peak, read())
			}
		}
	})
	cpu0, cpuOK := ProcessCPU()
	start := time.Now()
	f()
	wall := time.Since(start)
	cpu1, _ := ProcessCPU()
	close(done)
	wg.Wait()
	c := Cost{Wall: wall, CPU: wall, Growth: max(peak, read()) - base}
	if cpuOK {
		c.CPU = cpu1 - cpu0
	}
	return c
}

// hangSlack is how much longer than twice the deadline a call's wall time
// may run on a loaded machine before it counts as a hang.
const hangSlack = 30 * time.Second

// AssertPrompt checks that a call which a limit ended cost at most twice
// its deadline in CPU time, and that it ended at all: its wall time within
// twice the deadline plus a slack no load on a test machine reaches.
func AssertPrompt(t assert.TestingT, c Cost, deadline time.Duration, msgAndArgs ...any) bool {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	cpu := assert.Less(t, c.CPU, 2*deadline, append([]any{"the call's work (CPU time) ends within twice the deadline"}, msgAndArgs...)...)
	wall := assert.Less(t, c.Wall, 2*deadline+hangSlack, append([]any{"the call ends (wall time)"}, msgAndArgs...)...)
	return cpu && wall
}
