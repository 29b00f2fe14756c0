package isolation

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/kartalua/karta/luaapi"
)

// classify names what ended a worker as a limit error: the deadline the
// supervisor enforced by killing it, the kernel's memory or CPU limit, the
// Go runtime's stack limit, or — anything else, a crash — KindWorker.
func classify(karta string, op Op, o *Options, st *os.ProcessState, killedFor, stderr, reason string) *luaapi.LimitError {
	le := &luaapi.LimitError{Karta: karta, Hook: string(op), Kind: KindWorker, Limit: reason}
	sig, killed := signaled(st)
	cpu := st.UserTime() + st.SystemTime()
	switch {
	case killedFor != "":
		le.Kind, le.Limit = luaapi.KindDeadline, "of the call, plus "+deadlineGrace.String()+" (the worker was killed)"
	case strings.Contains(stderr, "out of memory") || strings.Contains(stderr, "cannot allocate memory"):
		le.Kind, le.Limit = luaapi.KindMemory, fmt.Sprintf("%d MiB (the worker's RLIMIT_DATA)", o.MaxMemory>>20)
	case strings.Contains(stderr, "stack overflow") || strings.Contains(stderr, "stack exceeds"):
		le.Kind, le.Limit = luaapi.KindStackSize, fmt.Sprintf("%d MiB (the worker's goroutine stack)", o.MaxMemory>>22)
	case killed && (sig == syscall.SIGKILL || sig == syscall.SIGXCPU) && o.MaxCPU > 0 && cpu >= o.MaxCPU-cpuSlack:
		le.Kind, le.Limit = luaapi.KindDeadline, fmt.Sprintf("CPU time %s (the worker's RLIMIT_CPU)", o.MaxCPU)
	}
	return le
}

// cpuSlack is how far below its CPU limit a worker killed by SIGKILL may
// have measured and still be taken as killed by the limit (the kernel
// checks the limit on its own ticks).
const cpuSlack = 500 * time.Millisecond
