package gangoutput

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/podgroups"
)

// countingHooks is a Program whose gang calls are counted, as a server's
// isolated Programs (their calls in worker processes) stand in for it.
type countingHooks struct {
	*interpreter.Program
	gangs, specs *atomic.Int64
}

func (h countingHooks) GetGangGroups(ctx context.Context, obj *unstructured.Unstructured, pods []*unstructured.Unstructured) (*interpreter.GangResult, error) {
	h.gangs.Add(1)
	return h.Program.GetGangGroups(ctx, obj, pods)
}

func (h countingHooks) GetPodSpecs(ctx context.Context, obj *unstructured.Unstructured) (*interpreter.PodSpecs, error) {
	h.specs.Add(1)
	return h.Program.GetPodSpecs(ctx, obj)
}

// Options.Hooks is what the reconciler calls of a workload's Program.
func TestHooksOption(t *testing.T) {
	var gangs, specs atomic.Int64
	e := newEnv(t)
	e.start(podgroups.Coscheduling, Options{Hooks: func(p *interpreter.Program) Hooks {
		return countingHooks{Program: p, gangs: &gangs, specs: &specs}
	}})
	_, pods := e.jobSet()
	e.create(pods[0])
	e.waitObjects(coschedPGGVK, jobSetNS, driverGroup)
	assert.Positive(t, gangs.Load(), "GetGangGroups through the hooks")
	assert.Positive(t, specs.Load(), "GetPodSpecs through the hooks")
}
