package interpreter

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/kartalua/karta/luaapi"
)

// LimitStats is what a Program remembers of its calls that ended on one of
// its own limits: a hostile or runaway Karta shows here, so that an adapter
// (a controller, a server) can report it without wrapping every call.
//
// A deadline the caller set or a cancellation by the caller (its context
// ending before the Program's timeout) is the caller's doing and is not
// counted.
type LimitStats struct {
	// Count is how many calls ended on a limit since the Program was
	// compiled. It only grows: an adapter compares two readings to count
	// the calls of an interval.
	Count uint64
	// Last is the most recent of them, with Karta, Hook, Kind and Limit
	// set (a copy: changing it changes nothing); nil when Count is 0.
	Last *luaapi.LimitError
	// LastAt is when Last was returned.
	LastAt time.Time
}

// limitRecord is a Program's LimitStats, safe for concurrent use. Limit
// errors are rare and end a call that ran to a limit, so a mutex costs
// nothing that matters.
type limitRecord struct {
	mu     sync.Mutex
	count  uint64
	last   luaapi.LimitError
	lastAt time.Time
}

// note records err when it is a limit of the Program's own. ctx is the
// caller's context and timeout the Program's: a deadline is the caller's
// when ctx ended, or when ctx's deadline came before the Program's own
// (the call's clock may pass it before ctx's timer marks ctx done).
func (r *limitRecord) note(ctx context.Context, start time.Time, timeout time.Duration, err error) {
	var le *luaapi.LimitError
	if !errors.As(err, &le) {
		return
	}
	if le.Kind == luaapi.KindDeadline {
		if ctx.Err() != nil || errors.Is(le, context.Canceled) {
			return
		}
		if d, ok := ctx.Deadline(); ok && (timeout <= 0 || !d.After(start.Add(timeout))) {
			return
		}
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.count++
	r.last, r.lastAt = *le, now
}

func (r *limitRecord) stats() LimitStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := LimitStats{Count: r.count, LastAt: r.lastAt}
	if r.count > 0 {
		last := r.last
		st.Last = &last
	}
	return st
}

// LimitStats reports the Program's calls that ended on one of its limits
// (see LimitStats). It is safe to call at any time, from any goroutine.
func (p *Program) LimitStats() LimitStats { return p.limitRec.stats() }
