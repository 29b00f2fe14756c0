//go:build !unix

package heapwatch

import "time"

// processCPU is not reported on this platform: Measure uses wall time.
func processCPU() (time.Duration, bool) { return 0, false }
