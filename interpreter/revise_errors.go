package interpreter

import (
	"fmt"
	"strings"
)

// ReviseError is the error of a failed ReviseSpec, ReviseReplica, Suspend
// or Resume: every error found, so that a user fixes them in one round.
// The object is unchanged.
type ReviseError struct {
	Errors []error
}

// newReviseError drops repeated messages: a path that cannot be located
// fails once per write through it, but is one problem.
func newReviseError(errs []error) *ReviseError {
	seen := make(map[string]bool, len(errs))
	out := make([]error, 0, len(errs))
	for _, err := range errs {
		if msg := err.Error(); !seen[msg] {
			seen[msg] = true
			out = append(out, err)
		}
	}
	return &ReviseError{Errors: out}
}

// Error prints one error per line, as the CLI reports problems.
func (e *ReviseError) Error() string {
	msgs := make([]string, len(e.Errors))
	for i, err := range e.Errors {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap gives errors.Is and errors.As every error.
func (e *ReviseError) Unwrap() []error { return e.Errors }

// RevisionError is an error of one revision, named by its index in the
// list, its component and its instance ("*" or the given name before an
// instance was chosen, the instance's id after).
type RevisionError struct {
	Index     int
	Component string
	Instance  string
	Err       error
}

func (e *RevisionError) Error() string {
	return fmt.Sprintf("revisions[%d] (component %q, instance %q): %v", e.Index, e.Component, e.Instance, e.Err)
}

func (e *RevisionError) Unwrap() error { return e.Err }

// UnreachableError is a patch field that no path of the component writes
// (docs/karta.md, "The PodTemplateSpec view"): spec.tolerations is not reachable through component
// "predictor".
type UnreachableError struct {
	Component string
	// Path is the view path, e.g. spec.tolerations.
	Path string
	// Reason, when set, says why, e.g. "it has no metadataPath".
	Reason string
}

func (e *UnreachableError) Error() string {
	msg := fmt.Sprintf("%s is not reachable through component %q", e.Path, e.Component)
	if e.Reason != "" {
		msg += " (" + e.Reason + ")"
	}
	return msg
}

// PathError is a component path that a write cannot go through (docs/karta.md, "Writes: all or nothing",
// step 2): it is not assignable (Err is nil and Reason says why), or
// jq path() fails on the object (Err is gojq's error).
type PathError struct {
	Component string
	// Field is the Karta field, e.g. podTemplateSpecPath.
	Field  string
	Expr   string
	Reason string
	Err    error
}

func (e *PathError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("component %q: %s %q is not assignable: %s", e.Component, e.Field, e.Expr, e.Reason)
	}
	return fmt.Sprintf("component %q: %s %q: path() failed: %v", e.Component, e.Field, e.Expr, e.Err)
}

func (e *PathError) Unwrap() error { return e.Err }

// WriteRef names the origin of a write: a revision's change at a view
// path, or a suspend/resume/replica action.
type WriteRef struct {
	// Revision is the index in the revision list; -1 for an action.
	Revision  int
	Component string
	Instance  string
	// ViewPath is the view path of a revision's change, e.g.
	// metadata.labels.team; for an action, its field, e.g.
	// suspendActions[0].path.
	ViewPath string
}

func (w WriteRef) String() string {
	if w.Revision < 0 {
		return fmt.Sprintf("component %q %s", w.Component, w.ViewPath)
	}
	return fmt.Sprintf("revisions[%d] (component %q, instance %q) %s", w.Revision, w.Component, w.Instance, w.ViewPath)
}

// ConflictError is two writes that cannot both be carried out (docs/karta.md, "Writes: all or nothing",
// step 3): different writes to one location, or writes to locations one
// of which is a prefix of the other.
type ConflictError struct {
	First, Second WriteRef
	// FirstLocation and SecondLocation are JSON pointers into the object.
	FirstLocation, SecondLocation string
}

func (e *ConflictError) Error() string {
	at := e.FirstLocation
	if e.SecondLocation != e.FirstLocation {
		at += " and " + e.SecondLocation
	}
	return fmt.Sprintf("conflicting writes: %s and %s write %s", e.First, e.Second, at)
}

// WriteError is a located write that the object cannot take (docs/karta.md, "Writes: all or nothing",
// step 4), e.g. through a missing array index or into a string.
type WriteError struct {
	Source WriteRef
	// Location is the JSON pointer written.
	Location string
	Msg      string
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("%s: cannot write %s: %s", e.Source, e.Location, e.Msg)
}

// NotDefinedError says a write operation does not exist for a Karta (docs/karta.md,
// "ReviseReplica, Suspend and Resume"): no suspendDefinition anywhere, or no replicasPath ReviseReplica
// can use.
type NotDefinedError struct {
	Karta  string
	Hook   Hook
	Reason string
}

func (e *NotDefinedError) Error() string {
	return fmt.Sprintf("karta %q: %s is not defined: %s", e.Karta, e.Hook, e.Reason)
}
