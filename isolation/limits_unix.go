//go:build unix

package isolation

import (
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
	"time"
)

// limitSelf sets the worker's kernel limits on itself, before it reads
// anything untrusted: RLIMIT_DATA (the heap, goroutine stacks and every
// other private writable mapping; Linux counts anonymous mappings in it
// since 4.7) to mem bytes and RLIMIT_CPU to cpu seconds (the kernel sends
// SIGKILL at the hard limit; Go ignores the soft limit's SIGXCPU, so both
// are equal). Soft and hard limits are both lowered, so the worker cannot
// raise them again. The Go runtime's own limits follow: the garbage
// collector works harder as the heap nears the limit, and a goroutine's
// stack stops at a quarter of it (a fatal "stack overflow" rather than an
// out-of-memory death, so that the supervisor can say which).
func limitSelf(mem, cpu int64) error {
	// Workers share the server's memory cgroup (a container's limit): when
	// it runs out, the kernel's OOM killer is to take a worker, never the
	// server. Raising one's own score needs no privilege; where there is
	// no /proc, there is no such killer to steer.
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0)
	if mem > 0 {
		if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: uint64(mem), Max: uint64(mem)}); err != nil {
			return fmt.Errorf("setting RLIMIT_DATA to %d: %w", mem, err)
		}
		debug.SetMemoryLimit(mem / 4 * 3)
		debug.SetMaxStack(int(mem / 4))
	}
	if cpu > 0 {
		if err := syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: uint64(cpu), Max: uint64(cpu)}); err != nil {
			return fmt.Errorf("setting RLIMIT_CPU to %d: %w", cpu, err)
		}
	}
	return nil
}

// cpuUsed is the CPU time the process has used (user and system).
func cpuUsed() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
