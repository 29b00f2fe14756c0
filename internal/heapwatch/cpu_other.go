//go:build !unix

package heapwatch

import "time"

// ProcessCPU is not reported on this platform: Measure uses wall time.
func ProcessCPU() (time.Duration, bool) { return 0, false }
