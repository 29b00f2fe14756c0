package karmada

import (
	"context"
	"errors"
	"fmt"
	"sync"

	lua "github.com/yuin/gopher-lua"
)

// errClosed is returned by calls on a closed Interpreter.
var errClosed = errors.New("karmada: interpreter is closed")

// statePool is a bounded pool of sandboxed Lua states. A state holds no
// per-customization data (every call instantiates its script in a fresh
// environment), so one pool serves every kind and operation. Idle states
// wait in a channel; slots holds one token per live state, so at most
// size states exist.
type statePool struct {
	newState func() *lua.LState
	idle     chan *lua.LState
	slots    chan struct{}
	done     chan struct{}
	once     sync.Once
}

func newStatePool(size int, newState func() *lua.LState) *statePool {
	return &statePool{
		newState: newState,
		idle:     make(chan *lua.LState, size),
		slots:    make(chan struct{}, size),
		done:     make(chan struct{}),
	}
}

// get returns an idle state, or a new one while fewer than size are alive,
// or waits for one; ctx ends the wait.
func (p *statePool) get(ctx context.Context) (*lua.LState, error) {
	select {
	case <-p.done:
		return nil, errClosed
	default:
	}
	select {
	case L := <-p.idle:
		return L, nil
	default:
	}
	select {
	case L := <-p.idle:
		return L, nil
	case p.slots <- struct{}{}:
		return p.newState(), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("karmada: waiting for a Lua state: %w", ctx.Err())
	case <-p.done:
		return nil, errClosed
	}
}

// put returns a healthy state for reuse.
func (p *statePool) put(L *lua.LState) {
	select {
	case <-p.done:
		p.discard(L)
		return
	default:
	}
	p.idle <- L // never blocks: at most size states are alive
	select {
	case <-p.done: // closed meanwhile: close what close may have missed
		p.drain()
	default:
	}
}

// discard closes a state that failed (SPEC §10.4) and frees its slot.
func (p *statePool) discard(L *lua.LState) {
	L.Close()
	<-p.slots
}

// close closes the idle states; states in use are closed when put back.
func (p *statePool) close() {
	p.once.Do(func() { close(p.done) })
	p.drain()
}

func (p *statePool) drain() {
	for {
		select {
		case L := <-p.idle:
			p.discard(L)
		default:
			return
		}
	}
}
