package watchguard

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/klog/v2"
)

func TestLimitedHandlerDropsRepeatsWithinTheInterval(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	h := &limitedHandler{next: slog.NewTextHandler(&buf, nil).WithAttrs([]slog.Attr{slog.String("component", "client-go")}),
		state: &limitState{interval: 30 * time.Second, now: func() time.Time { return now }, last: map[string]*seen{}}}
	log := slog.New(h)
	for range 5 {
		log.Error("error retrieving resource lock default/karta-controller")
	}
	log.Info("another message")
	now = now.Add(31 * time.Second)
	log.Error("error retrieving resource lock default/karta-controller")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if assert.Len(t, lines, 3) {
		assert.Contains(t, lines[0], "component=client-go")
		assert.NotContains(t, lines[0], "dropped")
		assert.Contains(t, lines[1], `msg="another message"`)
		assert.Contains(t, lines[2], "dropped=4")
	}
}

func TestRouteKlog(t *testing.T) {
	var buf bytes.Buffer
	restore := RouteKlog(slog.New(slog.NewTextHandler(&buf, nil)))
	klog.Background().Info("Warning: watch ended with error", "reflector", "test")
	restore()
	klog.Background().Info("after restore")
	assert.Contains(t, buf.String(), "watch ended with error")
	assert.Contains(t, buf.String(), "component=client-go")
	assert.NotContains(t, buf.String(), "after restore")
}

// Commands that run side by side in one process (the CLI's tests) route
// klog while informers log through it: no race on klog's global, and each
// route gets the records of its time.
func TestRouteKlogSideBySide(t *testing.T) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				klog.Background().Info("from an informer")
			}
		}
	}()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			var buf bytes.Buffer
			restore := RouteKlog(slog.New(slog.NewTextHandler(&syncWriter{w: &buf}, nil)))
			time.Sleep(time.Millisecond)
			restore()
		})
	}
	wg.Wait()
	close(stop)
	<-done

	var buf bytes.Buffer
	restore := RouteKlog(slog.New(slog.NewTextHandler(&buf, nil)))
	klog.Background().WithValues("a", 1).Info("mine")
	restore()
	assert.Contains(t, buf.String(), `msg=mine`)
	assert.Contains(t, buf.String(), `a=1`)
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
