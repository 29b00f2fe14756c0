package refs

import (
	"context"
	"errors"
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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

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
