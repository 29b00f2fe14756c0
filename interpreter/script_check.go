package interpreter

import (
	"fmt"
	"strings"

	"github.com/kartalua/karta/internal/suggest"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/luaapi"
)

// CheckScript is the luaScript part of validation: the chunk must
// compile, an Argo CD form chunk (one whose top level ends in return) may not
// also define hooks, and globals that are not hook names are warned about,
// since they are most often a misspelt hook that would silently never run.
// Pass it as karta.ValidateOptions.CheckScript.
func CheckScript(script string) karta.Problems {
	info, err := luaapi.InspectChunk("luaScript", script)
	if err != nil {
		msg := err.Error()
		if se, ok := err.(*luaapi.SyntaxError); ok {
			msg = se.Msg
		}
		return karta.Problems{{Severity: karta.SeverityError, Message: "does not compile: " + msg}}
	}
	var problems karta.Problems
	var hooks, others []string
	for _, g := range info.Globals {
		if IsHook(g) {
			hooks = append(hooks, g)
		} else {
			others = append(others, g)
		}
	}
	if info.EndsInReturn && len(hooks) > 0 {
		problems = append(problems, karta.Problem{
			Severity: karta.SeverityError,
			Message: fmt.Sprintf("an Argo CD health script (a chunk ending in return) may not also define hooks (%s); "+
				"use one form or the other", strings.Join(hooks, ", ")),
		})
	}
	names := hookNames()
	for _, g := range others {
		msg := fmt.Sprintf("global %q is not a hook name and is never called (hooks: %s)", g, hookList())
		if h, ok := suggest.Closest(g, names, 2); ok {
			msg = fmt.Sprintf("global %q is not a hook name and is never called; did you mean %s?", g, h)
		}
		problems = append(problems, karta.Problem{Severity: karta.SeverityWarning, Message: msg})
	}
	return problems
}

// ValidateOptions returns the karta validation options with the Lua checks
// of this package.
func ValidateOptions() karta.ValidateOptions {
	return karta.ValidateOptions{CheckScript: CheckScript}
}

func hookList() string { return strings.Join(hookNames(), ", ") }

func hookNames() []string {
	names := make([]string, len(hooks))
	for i, h := range hooks {
		names[i] = string(h)
	}
	return names
}
