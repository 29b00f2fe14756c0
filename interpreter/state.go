package interpreter

import (
	"context"
	"fmt"

	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/internal/jqlua"
	"github.com/kartalua/karta/luaapi"
)

// stateData is what one pooled Lua state holds for its Program: the
// generated chunk loaded once (its functions never write globals, so one
// load serves every call), its accessors, and the per-call slots the K
// helpers use.
type stateData struct {
	p *Program
	L *lua.LState
	// genEnv holds the generated hooks as its globals; generated is the
	// karta.generated table scripts see (the same functions).
	genEnv    *lua.LTable
	generated *lua.LTable
	// q is the accessor table Q of the generated chunk.
	q *lua.LTable
}

// newState builds a pooled state for the Program: the sandbox with the
// karta module, the jq runtime, and the generated chunk loaded.
func (p *Program) newState() (*stateData, error) {
	sd := &stateData{p: p}
	L := luaapi.NewState(p.limits.Sandbox(map[string]func(*lua.LState) lua.LValue{
		"karta": sd.kartaModule,
		"jq":    sd.jqFunction,
	}))
	sd.L = L
	sd.genEnv = luaapi.NewEnv(L)
	fn := luaapi.Instantiate(L, p.genProto, sd.genEnv)
	res, err := luaapi.CallProtected(context.Background(), L, p.limits.Timeout, fn, 1,
		jqlua.Runtime(L), jqlua.FallbackValue(L, p.fallbacks), sd.helpers())
	if err != nil {
		L.Close()
		return nil, fmt.Errorf("loading the generated chunk: %w", err)
	}
	q, ok := res[0].(*lua.LTable)
	if !ok {
		L.Close()
		return nil, fmt.Errorf("loading the generated chunk: it returned %s, not the accessor table", res[0].Type())
	}
	sd.q = q
	for _, h := range p.gen.hooks {
		sd.generated.RawSetString(string(h), sd.genEnv.RawGetString(string(h)))
	}
	return sd, nil
}

// closeState closes a state the pool drops.
func closeState(sd *stateData) { sd.L.Close() }
