package luaapi

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// LimitKind names a per-call limit (docs/security.md, "Limits").
type LimitKind string

// The limits. Deadline, instructions, call depth, stack size, string size
// and memory are enforced by this package (see CallProtected and
// docs/security.md); result size is enforced where results are encoded.
const (
	KindDeadline     LimitKind = "deadline"
	KindCallDepth    LimitKind = "call depth"
	KindStackSize    LimitKind = "stack size"
	KindMemory       LimitKind = "memory"
	KindInstructions LimitKind = "instructions"
	KindStringSize   LimitKind = "string size"
	KindResultSize   LimitKind = "result size"
	// KindReferencedBytes is the JSON size of the objects a call's
	// references hold, counted against its memory limit (interpreter).
	KindReferencedBytes LimitKind = "referenced bytes"
)

// LimitError is a call that crossed a limit. Karta and Hook are filled in by
// the caller (the interpreter), which knows them; Limit is the limit as
// printed ("1s", "200", "1 MiB"). Cause is the underlying error, if any: a
// deadline wraps ctx.Err(), so errors.Is(err, context.DeadlineExceeded)
// holds.
type LimitError struct {
	Karta, Hook string
	Kind        LimitKind
	Limit       string
	Cause       error
}

// Error prints the limit, e.g.
// `karta "jobset": GetPodSpecs: instruction limit 10000000 exceeded`.
func (e *LimitError) Error() string {
	prefix := ""
	if e.Karta != "" {
		prefix = "karta " + strconv.Quote(e.Karta) + ": "
	}
	if e.Hook != "" {
		prefix += e.Hook + ": "
	}
	switch e.Kind {
	case KindDeadline:
		if errors.Is(e.Cause, context.Canceled) {
			return prefix + "call canceled before its deadline " + e.Limit
		}
		return prefix + "deadline " + e.Limit + " exceeded"
	case KindInstructions:
		return prefix + "instruction limit " + e.Limit + " exceeded"
	default:
		return prefix + string(e.Kind) + " limit " + e.Limit + " exceeded"
	}
}

// Unwrap returns the cause (ctx.Err() for a deadline).
func (e *LimitError) Unwrap() error { return e.Cause }

// formatSize prints a byte count the way limits are written (64 MiB).
func formatSize(n int) string { return formatSize64(int64(n)) }

func formatSize64(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
