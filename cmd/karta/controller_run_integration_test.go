//go:build integration

package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/testenv"
)

// runningController is a `karta controller` run in the test's process for
// the test's length: the addresses it logged it serves on, by what it
// serves ("health probes", "metrics", "the interpreter webhook"), and its
// stderr.
type runningController struct {
	addrs  map[string]string
	stderr *testenv.SyncBuffer
	done   <-chan error
}

// startController runs `karta controller ARGS…` until the test ends (then
// it must stop within a minute, without error) and waits until it has
// logged its three addresses and answers /readyz with 200.
func startController(t *testing.T, args ...string) *runningController {
	t.Helper()
	stderr := &testenv.SyncBuffer{}
	root := newRootCmd(streams{in: strings.NewReader(""), out: io.Discard, err: stderr})
	root.SetArgs(append([]string{"controller"}, args...))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(time.Minute):
			t.Errorf("karta controller did not stop")
		}
		if t.Failed() {
			t.Logf("stderr:\n%s", stderr.String())
		}
	})
	c := &runningController{addrs: map[string]string{}, stderr: stderr, done: done}
	require.Eventually(t, func() bool {
		for _, m := range servingAddrRE.FindAllStringSubmatch(stderr.String(), -1) {
			c.addrs[m[1]] = m[2]
		}
		return len(c.addrs) == 3
	}, time.Minute, 20*time.Millisecond, "addresses not logged: %s", stderr.String())
	require.Eventually(t, func() bool {
		code, _ := httpGet(c.addrs["health probes"], readyzPath)
		return code == http.StatusOK
	}, 2*time.Minute, 100*time.Millisecond, "readyz; stderr: %s", stderr.String())
	return c
}

// alive reports whether the controller is still running.
func (c *runningController) alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// httpGet is a plain GET: the status code and body, or 0 and the error.
func httpGet(addr, path string) (int, string) {
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
