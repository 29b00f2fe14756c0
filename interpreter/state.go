package interpreter

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
)

// stateData is what one pooled Lua state holds for its Program: the
// sandbox with the karta module and jq. A state runs the Program's
// scripts; the generated hooks they call (karta.generated) are Go
// functions (kmodule.go), so a state loads no generated Lua and no jq
// runtime.
type stateData struct {
	p *Program
	L *lua.LState
	// generated is the karta.generated table scripts see.
	generated *lua.LTable
}

// newState builds a pooled state for the Program: the sandbox with the
// karta module and jq.
func (p *Program) newState() (*stateData, error) {
	sd := &stateData{p: p}
	sd.L = luaapi.NewState(p.limits.Sandbox(map[string]func(*lua.LState) lua.LValue{
		"karta": sd.kartaModule,
		"jq":    sd.jqFunction,
	}))
	return sd, nil
}

// closeState closes a state the pool drops.
func closeState(sd *stateData) { sd.L.Close() }
