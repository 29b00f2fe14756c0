package controller

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kartalua/karta/interpreter"
)

// The Evaluating condition (issue 12): a Karta whose evaluations end on
// limits says so on itself. Every LimitInterval the controller reads the
// LimitStats of each registered Karta's Program; when the count grew, the
// Karta gets Evaluating=False (LimitExceeded) with the count and the last
// error, and after an interval without any, Evaluating=True again. The
// core does not know about the controller: the Program keeps the record,
// the controller reads it.

// withinLimitsMessage is the message of Evaluating=True. It never changes,
// so that a quiet Karta is not rewritten every interval.
const withinLimitsMessage = "evaluations end within their limits"

// limitWatch is what the controller knows of one registered Program's limit
// errors. Guarded by the controller's mu.
type limitWatch struct {
	program *interpreter.Program
	// seen is the Program's LimitStats (Options.LimitStats) Count at the
	// last check.
	seen    uint64
	verdict verdict
}

var withinLimits = verdict{status: metav1.ConditionTrue, reason: ReasonWithinLimits, message: withinLimitsMessage}

// evaluating is e's Evaluating condition when e's Program is registered:
// the verdict of the last check, or True for a Program just registered
// (whose errors count from now). ok is false when the condition does not
// apply (the check is off, or e's Program is not registered); the watch, if
// any, is dropped, so that a Program registered again counts afresh.
// Called with mu held.
func (c *Controller) evaluating(e *entry, registered bool) (cond metav1.Condition, ok bool) {
	if c.opts.LimitInterval <= 0 {
		return metav1.Condition{}, false
	}
	if !registered {
		delete(c.limits, e.key)
		return metav1.Condition{}, false
	}
	w := c.limits[e.key]
	if w == nil || w.program != e.program {
		w = &limitWatch{program: e.program, seen: c.opts.LimitStats(e.program).Count, verdict: withinLimits}
		c.limits[e.key] = w
	}
	return metav1.Condition{Type: ConditionEvaluating, Status: w.verdict.status, Reason: w.verdict.reason,
		Message: truncate(w.verdict.message), ObservedGeneration: e.generation}, true
}

// checkLimits reads the limit errors of every watched Program and requeues
// the Kartas whose Evaluating verdict changed.
func (c *Controller) checkLimits() {
	c.mu.Lock()
	var requeue []key
	for k, w := range c.limits {
		st := c.opts.LimitStats(w.program)
		next := withinLimits
		if n := st.Count - w.seen; n > 0 && st.Last != nil {
			next = limitExceeded(n, c.opts.LimitInterval, st)
			c.log.Warn("karta evaluations ended on limits", "object", k.String(), "count", n, "last", st.Last.Error())
		}
		w.seen = st.Count
		if next != w.verdict {
			w.verdict = next
			requeue = append(requeue, k)
		}
	}
	c.mu.Unlock()
	for _, k := range requeue {
		c.loop.Add(k)
	}
}

// limitExceeded is Evaluating=False for n limit errors in the last
// interval, quoting the last (which names the Karta, the hook and the
// limit).
func limitExceeded(n uint64, interval time.Duration, st interpreter.LimitStats) verdict {
	calls := "evaluations"
	if n == 1 {
		calls = "evaluation"
	}
	return verdict{status: metav1.ConditionFalse, reason: ReasonLimitExceeded,
		message: fmt.Sprintf("%d %s ended on a limit in the last %s; the last: %s", n, calls, interval, st.Last.Error())}
}

// watchLimits calls checkLimits every LimitInterval until ctx ends.
func (c *Controller) watchLimits(ctx context.Context) {
	t := time.NewTicker(c.opts.LimitInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.checkLimits()
		}
	}
}
