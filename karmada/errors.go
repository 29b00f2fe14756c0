package karmada

import (
	"errors"
	"fmt"

	"github.com/kartalua/karta/internal/yamlerr"
)

// ErrNotEnabled is the error (wrapped in *NotEnabledError) of an operation
// that no loaded customization scripts for the object's kind: Karmada's
// "enabled = false", where it falls back to another interpreter.
var ErrNotEnabled = errors.New("operation not enabled")

// NotEnabledError names the kind and operation no customization scripts.
type NotEnabledError struct {
	APIVersion, Kind string
	Operation        Operation
}

func (e *NotEnabledError) Error() string {
	return fmt.Sprintf("%s: no customization for %s %s", e.Operation, e.APIVersion, e.Kind)
}

// Unwrap makes errors.Is(err, ErrNotEnabled) hold.
func (e *NotEnabledError) Unwrap() error { return ErrNotEnabled }

// LoadError is an input (a customization, an object, status items) that
// cannot be used. It prints as every reader of karta's inputs prints a
// problem: `SOURCE:LINE: document N: message`.
type LoadError struct {
	// Source is the file (or other source) and Document the 1-based
	// document within it, 0 when the source as a whole is at fault or
	// holds one document.
	Source   string
	Document int
	// Line is the 1-based line of the problem, or of the start of the
	// document at fault; 0 when unknown.
	Line int
	Msg  string
}

func (e *LoadError) Error() string {
	return yamlerr.Format(e.Source, e.Line, e.Document, "", e.Msg)
}

// CallError is an operation that failed in a script: a Lua error, a limit
// (errors.As reaches the *luaapi.LimitError or *luaapi.LuaError), a
// missing function, or a result Karmada would refuse (*ResultError).
type CallError struct {
	// Customization is the name of the customization whose script failed.
	Customization string
	Operation     Operation
	Err           error
}

func (e *CallError) Error() string {
	return fmt.Sprintf("customization %q: %s: %v", e.Customization, e.Operation.Hook(), e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }

// ResultError is a result of the wrong shape: not a table where Karmada
// wants one, not a number or boolean, a table that does not encode or
// unmarshal, or dependencies that do not validate.
type ResultError struct {
	Msg string
	Err error // the underlying conversion error, if any
}

func (e *ResultError) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *ResultError) Unwrap() error { return e.Err }

// UndefinedFunctionError is a script that does not define the function its
// operation calls (Karmada: "not found function X"), or defines it as
// something else.
type UndefinedFunctionError struct {
	Function string
	Type     string // the global's Lua type; "nil" when it is not defined
}

func (e *UndefinedFunctionError) Error() string {
	if e.Type == "nil" {
		return "not found function " + e.Function
	}
	return fmt.Sprintf("%s is not a function: %s", e.Function, e.Type)
}
