package refs

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kartalua/karta/internal/testenv"
	"github.com/kartalua/karta/internal/watchguard"
	"github.com/kartalua/karta/interpreter"
)

// Ready follows the API server as the process's other informers do: a
// referenced kind whose list the server does not answer waits for the
// server's probe and is retried, is counted in karta_watch_failing, and
// past the bound makes Ready fail naming its resource; once the server
// answers, the cache syncs and Ready is nil.
func TestReadyFollowsTheServer(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	var probes atomic.Int32
	reg := prometheus.NewRegistry()
	e := newEnvWith(t, Options{
		ServerProbe: func(context.Context) error {
			probes.Add(1)
			if down.Load() {
				return syscall.ECONNREFUSED
			}
			return nil
		},
		Registerer:        reg,
		WatchFailureBound: 100 * time.Millisecond,
	}, object(runtimeGVK, "", "torch", nil))
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	e.dyn.PrependReactor("list", resourceOf(runtimeGVK).Resource, func(clienttesting.Action) (bool, runtime.Object, error) {
		if down.Load() {
			return true, nil, refused
		}
		return false, nil, nil
	})
	e.cache.Watch([]schema.GroupVersionKind{runtimeGVK})
	assert.ErrorIs(t, e.cache.Ready(), ErrNotSynced, "before Start")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e.cache.Start(ctx)

	const resource = "clustertrainingruntimes.trainer.kubeflow.org"
	var unreachable *watchguard.UnreachableError
	require.Eventually(t, func() bool { return errors.As(e.cache.Ready(), &unreachable) }, 30*time.Second, 10*time.Millisecond)
	assert.Equal(t, []string{resource}, unreachable.Resources)
	assert.Contains(t, e.cache.Ready().Error(), "references: the API server has not answered the watches of "+resource+" for ")
	assert.Positive(t, probes.Load(), "the list waits for the server's probe")
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP karta_watch_failing 1 for each resource (RESOURCE.GROUP) whose last list or watch failed and has not succeeded since.
# TYPE karta_watch_failing gauge
karta_watch_failing{resource="`+resource+`"} 1
`), "karta_watch_failing"))

	down.Store(false)
	require.Eventually(t, func() bool { return e.cache.Ready() == nil }, 30*time.Second, 10*time.Millisecond)
	assert.True(t, e.cache.HasSynced())
	got, err := e.cache.Resolve(context.Background(), interpreter.ReferenceQuery{GVK: runtimeGVK, Shape: "lookup", Name: "torch"}, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"/torch"}, names(got))
	n, err := testutil.GatherAndCount(reg, "karta_watch_failing")
	require.NoError(t, err)
	assert.Zero(t, n, "the resource recovered: no karta_watch_failing series")
}

// flakyMapper fails while down, as discovery does when the API server
// does not answer.
type flakyMapper struct {
	meta.RESTMapper
	down *atomic.Bool
}

func (m flakyMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if m.down.Load() {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
	return m.RESTMapper.RESTMapping(gk, versions...)
}

// A kind whose discovery failed (the server down when it was mapped) is
// not taken for one the cluster does not serve: Ready says so, and
// DiscoveryFailed asks for it to be mapped again (logged once, however
// often), after which it is watched and Ready is nil.
func TestReadyWhileDiscoveryFails(t *testing.T) {
	e := newEnv(t, object(runtimeGVK, "", "torch", nil))
	var down atomic.Bool
	down.Store(true)
	var log testenv.SyncBuffer
	c, err := New(e.dyn, flakyMapper{RESTMapper: e.mapper, down: &down}, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c.Start(ctx)
	c.Watch([]schema.GroupVersionKind{runtimeGVK})
	c.Watch([]schema.GroupVersionKind{runtimeGVK})
	assert.True(t, c.DiscoveryFailed())
	assert.Equal(t, 1, strings.Count(log.String(), "cannot watch a referenced kind"), log.String())
	assert.EqualError(t, c.Ready(), "references: discovering trainer.kubeflow.org/v1alpha1, Kind=ClusterTrainingRuntime: dial tcp: connection refused")
	_, err = c.Resolve(context.Background(), interpreter.ReferenceQuery{GVK: runtimeGVK, Shape: "lookup", Name: "torch"}, nil)
	assert.Error(t, err, "absent meanwhile")

	down.Store(false)
	c.Watch([]schema.GroupVersionKind{runtimeGVK})
	assert.False(t, c.DiscoveryFailed())
	require.Eventually(t, func() bool { return c.Ready() == nil }, 30*time.Second, 10*time.Millisecond)
	got, err := c.Resolve(context.Background(), interpreter.ReferenceQuery{GVK: runtimeGVK, Shape: "lookup", Name: "torch"}, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"/torch"}, names(got))

	// A kind the cluster does not serve is an answer: ready, and not
	// mapped again sooner; nor when discovery fails for it later (an
	// outage is the guard's to report, past its bound).
	c.Watch([]schema.GroupVersionKind{runtimeGVK, widgetGVK})
	assert.False(t, c.DiscoveryFailed())
	assert.NoError(t, c.Ready())
	down.Store(true)
	c.Watch([]schema.GroupVersionKind{runtimeGVK, widgetGVK})
	assert.False(t, c.DiscoveryFailed())
	assert.NoError(t, c.Ready())
	_, err = c.Resolve(context.Background(), interpreter.ReferenceQuery{GVK: widgetGVK, Shape: "lookup", Name: "w"}, nil)
	assert.EqualError(t, err, "the cluster does not serve example.com/v1, Kind=Widget")
}
