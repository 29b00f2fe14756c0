package studio

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"runtime"
	"strconv"
	"time"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/isolation"
	"github.com/kartalua/karta/webhook"
)

//go:embed assets
var assets embed.FS

// DefaultMaxRequestBytes is the largest request body accepted by default:
// the webhook's (`karta serve --max-request-bytes`).
const DefaultMaxRequestBytes = webhook.DefaultMaxRequestBytes

// defaultRequestTimeout bounds one request's evaluations, all hooks of all
// its documents together; each hook call has the interpreter's own limits.
const defaultRequestTimeout = 20 * time.Second

// fairKey is the one key of the studio's evaluations in its Fair: a
// studio serves one person, so every evaluation shares one bound.
const fairKey = "karta studio"

// Options configure New. The zero value gives the defaults.
type Options struct {
	// MaxRequestBytes is the largest request body; a larger one is
	// answered 413 (default DefaultMaxRequestBytes).
	MaxRequestBytes int64
	// Concurrency is the most evaluations at once (default: half the
	// CPUs, at least one); more wait up to a second in a bounded queue,
	// or are answered 429.
	Concurrency int
	// RequestTimeout bounds one request's evaluations (default
	// defaultRequestTimeout).
	RequestTimeout time.Duration
	// Limits bound each hook call (default: the interpreter's, as
	// `karta serve` runs a Karta).
	Limits interpreter.Limits
}

// Handler serves the studio's page and API. It is safe for concurrent use.
type Handler struct {
	opts Options
	fair *isolation.Fair
	mux  *http.ServeMux
}

// New returns the studio's handler.
func New(opts Options) *Handler {
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = max(runtime.NumCPU()/2, 1)
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = defaultRequestTimeout
	}
	h := &Handler{opts: opts, fair: isolation.NewFair(opts.Concurrency, 16, time.Second), mux: http.NewServeMux()}
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded folder is there: a build defect
	}
	h.mux.Handle("GET /", http.FileServerFS(static))
	h.mux.HandleFunc("GET /api/builtins", h.serveBuiltins)
	h.mux.HandleFunc("GET /api/builtins/{name}", h.serveBuiltin)
	h.mux.HandleFunc("POST /api/check", h.serveCheck)
	h.mux.HandleFunc("POST /api/evaluate", h.serveEvaluate)
	h.mux.HandleFunc("POST /api/bundle", h.serveBundle)
	h.mux.HandleFunc("POST /api/exports", h.serveExports)
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The page runs only what it embeds; nothing is loaded from elsewhere.
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	h.mux.ServeHTTP(w, r)
}

// apiError is the body of every failed API request.
type apiError struct {
	Error string `json:"error"`
}

// decodeRequest reads a JSON body of at most MaxRequestBytes into v; it
// answers the failure itself and returns false.
func (h *Handler) decodeRequest(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxRequestBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeJSON(w, http.StatusRequestEntityTooLarge, apiError{Error: "the request body is over " + strconv.FormatInt(tooLarge.Limit, 10) + " bytes"})
			return false
		}
		writeJSON(w, http.StatusBadRequest, apiError{Error: "reading the request: " + err.Error()})
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{Error: "the request is not the JSON this endpoint takes: " + err.Error()})
		return false
	}
	return true
}

// evaluating answers fn's value as JSON, run under bounded.
func (h *Handler) evaluating(w http.ResponseWriter, r *http.Request, fn func(ctx context.Context) any) {
	h.bounded(w, r, func(ctx context.Context) { writeJSON(w, http.StatusOK, fn(ctx)) })
}

// bounded runs fn, which answers the request, under the bound of
// concurrent evaluations and the request's timeout; a request over the
// bound is answered 429.
func (h *Handler) bounded(w http.ResponseWriter, r *http.Request, fn func(ctx context.Context)) {
	ctx, cancel := context.WithTimeout(r.Context(), h.opts.RequestTimeout)
	defer cancel()
	release, ok := h.acquire(ctx, w)
	if !ok {
		return
	}
	defer release()
	fn(ctx)
}

// acquire takes a slot of the bound of concurrent evaluations. Over the
// bound it answers 429 (503 when the request ended while it waited) and
// returns false.
func (h *Handler) acquire(ctx context.Context, w http.ResponseWriter) (release func(), ok bool) {
	release, err := h.fair.Acquire(ctx, fairKey)
	if err == nil {
		return release, true
	}
	var busy *isolation.BusyError
	if errors.As(err, &busy) {
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusTooManyRequests, apiError{Error: err.Error()})
		return nil, false
	}
	writeJSON(w, http.StatusServiceUnavailable, apiError{Error: err.Error()})
	return nil, false
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	// A failed write is the client gone: nothing to tell it.
	_ = json.NewEncoder(w).Encode(v)
}
