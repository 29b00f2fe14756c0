package interpreter

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/luaapi"

	"github.com/kartalua/karta/internal/statepool"
)

// Script is a Lua chunk whose global functions override generated hooks
// (a --script file).
type Script struct {
	// Name names the chunk in errors, e.g. "fix.lua" → "script:fix.lua".
	Name   string
	Source string
}

// Limits bound every hook call: the one limits type of karta (see
// luaapi.Limits), with its defaults.
type Limits = luaapi.Limits

// Options configure Compile.
type Options struct {
	// Scripts override hooks after spec.luaScript, in order (later wins).
	Scripts []Script
	// Limits bound each call.
	Limits Limits
	// PoolSize is the most Lua states the Program keeps (default
	// 2×GOMAXPROCS); calls beyond it wait for a free state.
	PoolSize int
	// Prewarm is how many states Compile creates up front (at most
	// PoolSize), so that a server's first Lua calls do not pay for
	// building them. With 0 (the default) or less, the pool and its first
	// state are built on the first call that needs Lua (a script's hook,
	// an adapter's WithState) — never, for a Karta without scripts whose
	// callers use only its hooks. Scripts are compiled at Compile either
	// way.
	Prewarm int
	// AllowKindMismatch lets the hooks run on objects of any kind. By
	// default an object whose apiVersion and kind are not the Karta's root
	// kind is refused with a *KindMismatchError (see Program.CheckKind).
	AllowKindMismatch bool
}

// Program is a compiled Karta: its hooks (Go algorithms over its compiled
// jq paths) and overrides, compiled once, and a pool of Lua states to run
// the overrides. A Program is immutable and
// safe for concurrent use by any number of goroutines.
type Program struct {
	karta *karta.Karta
	name  string
	// warnings are the checked Karta's validation warnings.
	warnings karta.Problems
	gvk      schema.GroupVersionKind
	// apiVersion is gvk's group/version, as objects spell it.
	apiVersion string
	// allowKindMismatch is Options.AllowKindMismatch.
	allowKindMismatch bool
	limits            Limits

	model *model
	gang  *gangModel
	// The pool is built by buildPool, once, on first need (every path to
	// a Lua state goes through withState, which builds it); poolBuilt
	// says it is.
	poolOnce  sync.Once
	poolErr   error
	poolBuilt atomic.Bool
	// overrides are spec.luaScript and the scripts, in order, compiled
	// at Compile.
	overrides []override
	// poolSize and prewarm are the pool's options (Options.PoolSize,
	// Options.Prewarm).
	poolSize, prewarm int

	// overridden are the hooks some override chunk defines; enabled are
	// the hooks defined after all chunks load.
	overridden map[Hook]bool
	enabled    map[Hook]bool
	// argo is set when an override is an Argo CD health script (a chunk
	// whose top level ends in return): it becomes InterpretStatus and
	// InterpretHealth.
	argo *override

	pool *statepool.Pool[*stateData]
	// limitRec counts the calls that ended on a limit (LimitStats).
	limitRec limitRecord
	// adapterModel is the model's shape for adapters, built once on first
	// use (adapter.go).
	adapterModel struct {
		once sync.Once
		m    *Shape
	}
	// jq caches the programs scripts run through jq(expr, value).
	jq jqCache
	// status is InterpretStatus (direct_hooks.go): the hook's when no
	// script overrides it, karta.generated.InterpretStatus's otherwise.
	status *statusPlan
	// refs are the Karta's references with their programs (references.go),
	// in the order of their variables.
	refs []compiledReference
	// noDirect turns direct evaluation off, for the tests that compare it
	// with the exact back end: the hooks evaluate every expression on its
	// gojq program.
	noDirect bool
}

// override is one user chunk compiled once.
type override struct {
	chunk  string
	source string
	proto  *lua.FunctionProto
	// globals are the global names the chunk defines at its top level.
	globals []string
	// argo marks an Argo CD health script (a chunk ending in return).
	argo bool
	// definesOnly: the top level only defines functions and constants
	// (CheckLoad need not run it).
	definesOnly bool
}

// Compile validates a Karta and compiles it into a Program: the component
// model and the status plan over the Karta's jq paths (each on its direct
// form or its gojq program), every script compiled to a prototype once.
// The pool's states are built on the first call that needs Lua
// (Options.Prewarm builds them now). A Karta with validation errors is
// refused with a *karta.ValidationError listing every problem.
func Compile(k *karta.Karta, opts Options) (*Program, error) {
	if k == nil {
		return nil, fmt.Errorf("compile: %w", karta.ErrNoKarta)
	}
	checked, err := karta.Check(k, ValidateOptions())
	if err != nil {
		return nil, err
	}
	return CompileChecked(checked, opts)
}

// CompileChecked compiles a Karta that karta.Check has checked (with
// ValidateOptions(), so that its scripts were checked too): the step after
// Check, for callers that keep the checked form — its warnings, say. The
// expressions are not parsed again.
func CompileChecked(checked *karta.Checked, opts Options) (*Program, error) {
	if checked == nil || checked.Karta == nil {
		return nil, fmt.Errorf("compile: %w", karta.ErrNoKarta)
	}
	k := checked.Karta
	p := &Program{karta: k, name: k.Name, limits: opts.Limits.WithDefaults(), warnings: checked.Warnings, allowKindMismatch: opts.AllowKindMismatch}
	if root := k.Spec.StructureDefinition.RootComponent; root != nil && root.Kind != nil {
		p.gvk = root.Kind.GVK()
		p.apiVersion = p.gvk.GroupVersion().String()
	}
	var err error
	if p.model, err = newModel(checked); err != nil {
		return nil, fmt.Errorf("karta %q: %w", k.Name, err)
	}
	if p.gang, err = newGangModel(p.model); err != nil {
		return nil, fmt.Errorf("karta %q: %w", k.Name, err)
	}
	p.model.exprs.sharePrefixes()
	if p.refs, err = compileReferences(checked); err != nil {
		return nil, fmt.Errorf("karta %q: %w", k.Name, err)
	}
	if err := p.compileOverrides(k.Spec.LuaScript, opts.Scripts); err != nil {
		return nil, err
	}
	if p.status, err = newStatusPlan(p.model.exprs); err != nil {
		return nil, fmt.Errorf("karta %q: %w", k.Name, err)
	}
	p.poolSize, p.prewarm = opts.PoolSize, opts.Prewarm
	if p.poolSize <= 0 {
		p.poolSize = 2 * runtime.GOMAXPROCS(0)
	}
	// The pool is built now when states are asked for up front;
	// otherwise on the first call that needs a state, which a Karta
	// without scripts may never make.
	if p.prewarm > 0 {
		if err := p.buildPool(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// buildPool builds the Program's pool of Lua states once, with its
// prewarmed states. Its error is the same on every call.
func (p *Program) buildPool() error {
	p.poolOnce.Do(func() {
		prewarm := max(p.prewarm, 1)
		p.pool, p.poolErr = statepool.New(statepool.Options[*stateData]{Size: p.poolSize, Prewarm: prewarm, New: p.newState, Close: closeState})
		if p.poolErr != nil {
			p.poolErr = fmt.Errorf("karta %q: %w", p.name, p.poolErr)
		}
		p.poolBuilt.Store(p.poolErr == nil)
	})
	return p.poolErr
}

// compileOverrides compiles spec.luaScript and the scripts once and works
// out which hooks end up enabled and overridden.
func (p *Program) compileOverrides(luaScript string, scripts []Script) error {
	chunks := []Script{}
	if luaScript != "" {
		chunks = append(chunks, Script{Name: p.chunkName("luaScript"), Source: luaScript})
	}
	for _, s := range scripts {
		chunks = append(chunks, Script{Name: "script:" + s.Name, Source: s.Source})
	}
	p.enabled = map[Hook]bool{}
	p.overridden = map[Hook]bool{}
	for _, h := range generatedHooks(p.model) {
		p.enabled[h] = true
	}
	for _, c := range chunks {
		info, err := luaapi.InspectChunkWith(c.Name, c.Source, p.limits)
		if err != nil {
			return fmt.Errorf("karta %q: %w", p.name, err)
		}
		proto, err := luaapi.CompileWith(c.Name, c.Source, p.limits)
		if err != nil {
			return fmt.Errorf("karta %q: %w", p.name, err)
		}
		o := override{chunk: c.Name, source: c.Source, proto: proto, globals: info.Globals, argo: info.EndsInReturn, definesOnly: info.DefinesOnly}
		p.overrides = append(p.overrides, o)
		if o.argo {
			p.argo = &p.overrides[len(p.overrides)-1]
			for _, h := range []Hook{HookInterpretStatus, HookInterpretHealth} {
				p.enabled[h], p.overridden[h] = true, true
			}
			continue
		}
		for _, g := range info.Globals {
			if IsHook(g) {
				p.enabled[Hook(g)], p.overridden[Hook(g)] = true, true
			}
		}
	}
	// The argo pointer must point into the final slice.
	for i := range p.overrides {
		if p.overrides[i].argo {
			p.argo = &p.overrides[i]
		}
	}
	return nil
}

func (p *Program) chunkName(part string) string { return "karta:" + p.name + "/" + part }

// Name is the Karta's name.
func (p *Program) Name() string { return p.name }

// GVK is the root component's kind, which the Program interprets.
func (p *Program) GVK() schema.GroupVersionKind { return p.gvk }

// Karta returns the Karta the Program was compiled from. Do not modify it.
func (p *Program) Karta() *karta.Karta { return p.karta }

// Source returns the Lua program, as `karta compile` prints it: the
// generated hooks — each a call of karta.generated.<Hook>, the Go
// algorithm a script reaches, with the jq paths it evaluates and the
// status rules as comments (codegen.go) — then each override chunk. It is
// byte-identical for equal inputs.
func (p *Program) Source() string {
	var b strings.Builder
	b.WriteString(generatedSource(p.model))
	for _, o := range p.overrides {
		fmt.Fprintf(&b, "\n-- override: %s\n", o.chunk)
		b.WriteString(o.source)
		if !strings.HasSuffix(o.source, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// HookEnabled reports whether a hook exists after all chunks load.
func (p *Program) HookEnabled(h Hook) bool { return p.enabled[h] }

// Overridden reports whether a user chunk defines the hook.
func (p *Program) Overridden(h Hook) bool { return p.overridden[h] }

// PoolStats reports the Program's pool of Lua states.
func (p *Program) PoolStats() PoolStats {
	if !p.poolBuilt.Load() {
		return PoolStats{Size: p.poolSize}
	}
	return p.pool.Stats()
}

// PoolStats are the counters of a Program's pool of Lua states.
type PoolStats = statepool.Stats

// generatedHooks are the hooks karta.generated holds, in the order
// generatedSource writes them (TestGeneratedHooksMatchSource).
func generatedHooks(m *model) []Hook {
	hooks := []Hook{HookInterpretStatus, HookGetPodSpecs, HookReviseSpec, HookGetGangGroups}
	if m.hasSuspend() {
		hooks = append(hooks, HookSuspend, HookResume)
	}
	return hooks
}

// hasSuspend reports whether some component has a suspendDefinition.
func (m *model) hasSuspend() bool {
	for _, c := range m.comps {
		if c.c.SuspendDefinition != nil {
			return true
		}
	}
	return false
}

// Warnings returns the validation warnings of the Karta the Program was
// compiled from (validation errors refuse the Karta).
func (p *Program) Warnings() karta.Problems { return p.warnings }
