//go:build unix

package heapwatch

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time the process has used so far, user and system,
// GC workers included; ok is false where the platform does not report it.
func ProcessCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
