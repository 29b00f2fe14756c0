package karta

import (
	"fmt"
	"strings"
)

// Severity says whether a Problem fails validation.
type Severity string

// The severities of a Problem.
const (
	// SeverityError fails validation: the Karta must not be used.
	SeverityError Severity = "error"
	// SeverityWarning is reported but does not fail validation.
	SeverityWarning Severity = "warning"
)

// Problem is one validation finding.
// +kubebuilder:object:generate=false
type Problem struct {
	Severity Severity
	// Field is the JSON field path of the offending value, e.g.
	// spec.structureDefinition.childComponents[1].ownerRef; "" when the
	// problem concerns the whole Karta.
	Field string
	// Message says what is wrong and how to fix it.
	Message string
}

// String renders the problem as "FIELD: message", or "FIELD: warning:
// message" for a warning. Without a field it is just the message (with its
// "warning: " prefix).
func (p Problem) String() string {
	msg := p.Message
	if p.Severity == SeverityWarning {
		msg = "warning: " + msg
	}
	if p.Field == "" {
		return msg
	}
	return p.Field + ": " + msg
}

// Problems is the result of validating a Karta, in document order.
// +kubebuilder:object:generate=false
type Problems []Problem

// Errors returns the problems of severity error.
func (ps Problems) Errors() Problems { return ps.bySeverity(SeverityError) }

// Warnings returns the problems of severity warning.
func (ps Problems) Warnings() Problems { return ps.bySeverity(SeverityWarning) }

func (ps Problems) bySeverity(s Severity) Problems {
	var out Problems
	for _, p := range ps {
		if p.Severity == s {
			out = append(out, p)
		}
	}
	return out
}

// HasErrors reports whether any problem is an error.
func (ps Problems) HasErrors() bool {
	for _, p := range ps {
		if p.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Err returns nil when there is no error, else a *ValidationError holding
// the errors (warnings are left out: they do not make a Karta invalid).
// Its Karta name is empty; use ErrFor to name the Karta in the message.
func (ps Problems) Err() error { return ps.ErrFor("") }

// ErrFor is Err with the Karta's name (metadata.name) set in the error.
func (ps Problems) ErrFor(karta string) error {
	errs := ps.Errors()
	if len(errs) == 0 {
		return nil
	}
	return &ValidationError{Karta: karta, Problems: errs}
}

// ValidationError is a Karta that failed validation.
// +kubebuilder:object:generate=false
type ValidationError struct {
	// Karta is the Karta's metadata.name, "" when unknown.
	Karta string
	// Problems are the errors found.
	Problems Problems
}

// Error renders `karta "NAME" is invalid: ` followed by the problems
// joined with "; ".
func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	name := "karta"
	if e.Karta != "" {
		name = fmt.Sprintf("karta %q", e.Karta)
	}
	return name + " is invalid: " + strings.Join(parts, "; ")
}
