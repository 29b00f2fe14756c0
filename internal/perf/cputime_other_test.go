//go:build !unix

package perf

import "time"

// processCPU cannot be read here.
func processCPU() (time.Duration, bool) { return 0, false }
