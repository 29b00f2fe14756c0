package controller

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The condition types the controller writes.
const (
	// ConditionAccepted is True when the Karta loaded, validated and owns
	// its kind.
	ConditionAccepted = "Accepted"
	// ConditionCompiled is True when the Karta's Program is registered.
	ConditionCompiled = "Compiled"
	// ConditionEvaluating is on a Karta whose Program is registered: True
	// while its evaluations end within their limits, False when some in
	// the last interval (Options.LimitInterval) ended on a limit.
	ConditionEvaluating = "Evaluating"
)

// The reasons of the conditions.
const (
	// ReasonValid (Accepted=True): the Karta is valid; warnings, if any,
	// are in the message.
	ReasonValid = "Valid"
	// ReasonInvalid (Accepted=False): the Karta did not load or validate;
	// the message lists every problem with its field path.
	ReasonInvalid = "Invalid"
	// ReasonConflict (Accepted=False, Compiled=False): an older Karta
	// claims the same kind.
	ReasonConflict = "Conflict"
	// ReasonCompiled (Compiled=True): the Program is registered.
	ReasonCompiled = "Compiled"
	// ReasonCompileFailed (Compiled=False): compiling failed; the message
	// is the error.
	ReasonCompileFailed = "CompileFailed"
	// ReasonScriptFailed (Compiled=False): the Karta compiled, but the
	// top-level code of its scripts, run once under the call limits, failed
	// (an error, a loop ending on a limit); the message is the error.
	ReasonScriptFailed = "ScriptFailed"
	// ReasonNotAccepted (Compiled=False): the Karta is not valid, so it
	// was not compiled.
	ReasonNotAccepted = "NotAccepted"
	// ReasonWithinLimits (Evaluating=True): no evaluation of the Program
	// ended on a limit in the last interval.
	ReasonWithinLimits = "WithinLimits"
	// ReasonLimitExceeded (Evaluating=False): evaluations in the last
	// interval ended on a limit; the message counts them and quotes the
	// last one (Karta, hook, limit).
	ReasonLimitExceeded = "LimitExceeded"
)

// conditions are the Accepted and Compiled conditions of e. winner is the
// entry that owns e's kind (nil when e has no Program); base names the
// Program the registry started with for that kind, "" when none.
func conditions(e, winner *entry, base string) []metav1.Condition {
	accepted, compiled := e.accepted, e.compiled
	if e.program != nil {
		switch {
		case winner != nil && winner.key == e.key:
			msg := "registered for " + gvkString(e.gvk)
			if base != "" {
				msg += fmt.Sprintf(" in place of %q, which comes back when this Karta goes", base)
			}
			compiled = verdict{status: metav1.ConditionTrue, reason: ReasonCompiled, message: msg}
		case winner != nil:
			claim := fmt.Sprintf("%s already claims %s", winner.key.describe(), gvkString(e.gvk))
			accepted = verdict{status: metav1.ConditionFalse, reason: ReasonConflict, message: claim +
				"; of the Kartas claiming a kind, the oldest (by creationTimestamp, then by name) wins"}
			compiled = verdict{status: metav1.ConditionFalse, reason: ReasonConflict, message: "compiled but not registered: " + claim}
		}
	}
	return []metav1.Condition{
		{Type: ConditionAccepted, Status: accepted.status, Reason: accepted.reason, Message: truncate(accepted.message), ObservedGeneration: e.generation},
		{Type: ConditionCompiled, Status: compiled.status, Reason: compiled.reason, Message: truncate(compiled.message), ObservedGeneration: e.generation},
	}
}
