// Package argohealth reads what an Argo CD health script returns: the
// status words (gitops-engine's HealthStatusCode), the result table and its
// checks. Package argo (which runs Argo CD's scripts) and package
// interpreter (whose Karta may carry an Argo CD health script as its
// InterpretStatus override) both read results here, so the two agree.
package argohealth

import (
	"fmt"
	"slices"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Argo CD's health status words (gitops-engine's HealthStatusCode).
const (
	StatusHealthy     = "Healthy"
	StatusProgressing = "Progressing"
	StatusDegraded    = "Degraded"
	StatusSuspended   = "Suspended"
	StatusMissing     = "Missing"
	StatusUnknown     = "Unknown"
)

// statuses is every word, in the order error messages list them.
var statuses = []string{StatusHealthy, StatusProgressing, StatusDegraded, StatusSuspended, StatusMissing, StatusUnknown}

// Statuses returns Argo CD's health status words.
func Statuses() []string { return slices.Clone(statuses) }

// Health is what a health script returned. An empty Status means the
// script made no assessment (it returned nil, {} or no status), as Argo
// CD's empty HealthStatus does.
type Health struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// CheckStatus accepts one of Argo CD's words, or the empty status of no
// assessment; any other word is an error.
func CheckStatus(word string) error {
	if word == "" || slices.Contains(statuses, word) {
		return nil
	}
	return fmt.Errorf("Argo CD health status %q is not one of %s", word, strings.Join(statuses, ", "))
}

// FromLua reads a health script's result: nil, or a table whose status is
// a string or absent; a message that is not a string reads as empty. It
// does not check the word (see CheckStatus).
func FromLua(v lua.LValue) (Health, error) {
	var h Health
	if v == lua.LNil {
		return h, nil
	}
	tbl, ok := v.(*lua.LTable)
	if !ok {
		return h, fmt.Errorf("an Argo CD health script must return {status=..., message=...}, got %s", v.Type())
	}
	switch s := tbl.RawGetString("status").(type) {
	case lua.LString:
		h.Status = string(s)
	case *lua.LNilType:
	default:
		return h, fmt.Errorf("an Argo CD health script's status must be a string, got %s", s.Type())
	}
	if m, ok := tbl.RawGetString("message").(lua.LString); ok {
		h.Message = string(m)
	}
	return h, nil
}
