package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/testenv"
)

// karta studio prints its URL, serves the page and its API under
// --max-request-bytes, and stops with its context.
func TestStudioServes(t *testing.T) {
	var stdout testenv.SyncBuffer
	root := newRootCmd(streams{in: strings.NewReader(""), out: &stdout, err: io.Discard})
	root.SetArgs([]string{"studio", "--address", "127.0.0.1:0", "--max-request-bytes", "100"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	re := regexp.MustCompile(`^karta studio: (http://127\.0\.0\.1:\d+/)\n$`)
	var url string
	require.Eventually(t, func() bool {
		m := re.FindStringSubmatch(stdout.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	}, 20*time.Second, 10*time.Millisecond, stdout.String())

	resp, err := http.Get(url)
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(page), "<title>karta studio</title>")

	resp, err = http.Post(url+"api/evaluate", "application/json", strings.NewReader(`{"karta": "`+strings.Repeat("x", 200)+`"}`))
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "--max-request-bytes")

	cancel()
	waitStopped(t, done)
}

func TestStudioUsage(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"studio", "--max-request-bytes", "0"}, exitUsage, "karta: --max-request-bytes must be positive, not 0\n"},
		{[]string{"studio", "--concurrency", "-1"}, exitUsage, "karta: --concurrency must not be negative, not -1\n"},
		{[]string{"studio", "--address", "127.0.0.1:notaport"}, exitInvalid, "--address: listen tcp: lookup"},
		{[]string{"studio", "extra"}, exitUsage, `unknown command "extra" for "karta studio"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, stderr, code := runCLI(t, "", tc.args...)
			assert.Equal(t, tc.code, code, stderr)
			assert.Contains(t, stderr, tc.stderr)
		})
	}
}
