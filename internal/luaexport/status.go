package luaexport

import (
	"fmt"
	"strings"

	"github.com/kartalua/karta/internal/jqlua"
	"github.com/kartalua/karta/karta"
)

// Status emits statusOf(obj), the Karta's generic status (InterpretStatus's
// rule: the mapped statuses in precedence order, the first that holds). A
// body that names RANK, each status's place in that precedence, gets it
// with the helpers (Chunk's walk). Expressions with one output are called
// for their value (Value), under one protected call for the whole status.
func (e *Exporter) Status() error {
	sd := e.In.Karta().Spec.StructureDefinition.RootComponent.StatusDefinition
	anyOne := false
	// outs is the list of an expression's outputs.
	outs := func(field, expr string) (string, error) {
		f, one, err := e.Value(field, expr, "obj")
		anyOne = anyOne || one
		if one {
			return "{" + f + "}", err
		}
		return f, err
	}
	e.W("local function statusIn(obj)\n")
	// Validation requires the phaseDefinition a byPhase matcher reads;
	// without one there would be no phase, and the matcher false.
	hasPhase := sd != nil && sd.PhaseDefinition != nil && sd.PhaseDefinition.Path != ""
	if hasPhase {
		f, err := outs("phaseDefinition.path", sd.PhaseDefinition.Path)
		if err != nil {
			return err
		}
		e.W("  local phase = nil\n  local po = %s\n", f)
		e.W("  if po[1] ~= nil and po[1] ~= NULL then\n")
		e.W("    if type(po[1]) ~= \"string\" then error(\"InterpretStatus: the phase is not a string\") end\n")
		e.W("    phase = po[1]\n  end\n")
	}
	// Likewise a byConditions matcher and the conditionsDefinition.
	hasConds := sd != nil && sd.ConditionsDefinition != nil && sd.ConditionsDefinition.Path != ""
	if hasConds {
		cd := sd.ConditionsDefinition
		f, err := outs("conditionsDefinition.path", cd.Path)
		if err != nil {
			return err
		}
		e.W("  local conds = conditionsOf(%s, %s, %s, %s, %s)\n", f,
			jqlua.LuaString(cd.TypeFieldName), jqlua.LuaString(cd.StatusFieldName), jqlua.LuaString(cd.ReasonFieldName), jqlua.LuaString(cd.MessageFieldName))
	}
	e.W("  local first = nil\n")
	var mappings []karta.StatusMapping
	if sd != nil {
		mappings = sd.StatusMappings.InPrecedence()
	}
	for _, m := range mappings {
		if len(m.Matchers) == 0 {
			continue
		}
		var any []string
		for i, mt := range m.Matchers {
			var all []string
			if mt.ByPhase != "" {
				if hasPhase {
					all = append(all, "phase == "+jqlua.LuaString(mt.ByPhase))
				} else {
					all = append(all, "false")
				}
			}
			for _, c := range mt.ByConditions {
				if hasConds {
					all = append(all, fmt.Sprintf("condition(conds, %s, %s, %s)", jqlua.LuaString(c.Type), jqlua.LuaString(c.Status), jqlua.LuaString(c.Reason)))
				} else {
					all = append(all, "false")
				}
			}
			if x := mt.ByExpression; x != nil {
				field := fmt.Sprintf("statusMappings.%s[%d].byExpression.expression", m.Key, i)
				f, one, err := e.Value(field, x.Expression, "obj")
				if err != nil {
					return err
				}
				if one {
					anyOne = true
					all = append(all, TextIs(f, x.ExpectedResult))
				} else {
					all = append(all, fmt.Sprintf("outputIs(%s, %s)", f, jqlua.LuaString(x.ExpectedResult)))
				}
			}
			if len(all) == 0 {
				all = []string{"true"}
			}
			any = append(any, strings.Join(all, " and "))
		}
		// Every matcher is evaluated, as InterpretStatus evaluates them, so
		// that an error anywhere is an error here too: several are the
		// arguments of anyOf, which Lua evaluates before the call. The
		// first status that holds, in precedence order, is the status.
		cond := any[0]
		if len(any) > 1 {
			cond = "anyOf(\n      " + strings.Join(any, ",\n      ") + ")"
		}
		e.W("  if %s then first = first or %s end\n", cond, jqlua.LuaString(string(m.Status)))
	}
	e.W("  return first or \"Undefined\"\nend\n\n")
	if anyOne {
		e.Protect("statusOf", "statusIn")
	} else {
		e.W("statusOf = statusIn\n\n")
	}
	return nil
}
