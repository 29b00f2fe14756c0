package isolation

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/luaapi"
)

// KindWorker is the limit kind of a worker that died of something other
// than a limit it names (a panic, a signal from outside): the isolation
// boundary contained it.
const KindWorker luaapi.LimitKind = "worker"

// WorkerError is the error of a call whose worker process failed: it
// crashed, was killed, ran into a kernel-enforced limit, broke the
// protocol, or could not be started (or is waiting out its restart
// backoff). The server and other calls are untouched; the next call to
// the Karta runs on a new worker.
//
// Unwrap gives a *luaapi.LimitError naming the Karta, the hook and what
// ended the worker (memory, deadline, stack size, or KindWorker), so that
// code that counts limit errors counts these too.
type WorkerError struct {
	Karta string
	Op    Op
	// What happened, e.g. "killed by signal killed after the call's
	// deadline", "exit status 2: fatal error: stack overflow".
	Reason string
	// Stderr is the start of the worker's standard error (a Go runtime's
	// fatal error and its first frames), when it died.
	Stderr string
	// Limit classifies the failure as a limit error.
	Limit *luaapi.LimitError
}

func (e *WorkerError) Error() string {
	return fmt.Sprintf("karta %s: %s: worker process failed: %s", strconv.Quote(e.Karta), e.Op, e.Reason)
}

// Unwrap returns the limit error that classifies the failure.
func (e *WorkerError) Unwrap() error {
	if e.Limit == nil {
		return nil
	}
	return e.Limit
}

// wireError is an error as it crosses the pipe: its message and, where a
// caller branches on its type, the typed error's fields.
type wireError struct {
	Message    string                       `json:"message"`
	Limit      *wireLimit                   `json:"limit,omitempty"`
	NotDefined *interpreter.NotDefinedError `json:"notDefined,omitempty"`
	NotEnabled bool                         `json:"notEnabled,omitempty"`
}

type wireLimit struct {
	Karta, Hook string
	Kind        luaapi.LimitKind
	Limit       string
}

// toWire keeps what callers branch on of err: a *luaapi.LimitError, an
// *interpreter.NotDefinedError, karmada.ErrNotEnabled.
func toWire(err error) *wireError {
	w := &wireError{Message: err.Error()}
	var le *luaapi.LimitError
	if errors.As(err, &le) {
		w.Limit = &wireLimit{Karta: le.Karta, Hook: le.Hook, Kind: le.Kind, Limit: le.Limit}
	}
	var nd *interpreter.NotDefinedError
	if errors.As(err, &nd) {
		w.NotDefined = nd
	}
	w.NotEnabled = errors.Is(err, karmada.ErrNotEnabled)
	return w
}

// RemoteError is an error a worker's call returned (not a failure of the
// worker): its message is the error's, and errors.As and errors.Is find
// the typed errors it carried (*luaapi.LimitError,
// *interpreter.NotDefinedError, karmada.ErrNotEnabled).
type RemoteError struct {
	Message string
	wrapped []error
}

func (e *RemoteError) Error() string { return e.Message }

// Unwrap returns the typed errors the worker's error carried.
func (e *RemoteError) Unwrap() []error { return e.wrapped }

func (w *wireError) err() error {
	e := &RemoteError{Message: w.Message}
	if w.Limit != nil {
		e.wrapped = append(e.wrapped, &luaapi.LimitError{Karta: w.Limit.Karta, Hook: w.Limit.Hook, Kind: w.Limit.Kind, Limit: w.Limit.Limit, Cause: errors.New(w.Message)})
	}
	if w.NotDefined != nil {
		e.wrapped = append(e.wrapped, w.NotDefined)
	}
	if w.NotEnabled {
		e.wrapped = append(e.wrapped, karmada.ErrNotEnabled)
	}
	return e
}
