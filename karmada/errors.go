package karmada

import (
	"errors"
	"fmt"
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

// LoadError is a customization document that cannot be used.
type LoadError struct {
	// Source is the file (or other source) and Document the 1-based
	// document within it (0 when the source as a whole is at fault).
	Source   string
	Document int
	Msg      string
}

func (e *LoadError) Error() string {
	if e.Document > 0 {
		return fmt.Sprintf("%s (document %d): %s", e.Source, e.Document, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Source, e.Msg)
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
