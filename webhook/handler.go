// Package webhook serves Karmada's resource interpreter webhook protocol
// (ResourceInterpreterContext, config.karmada.io/v1alpha1) over HTTP,
// backed by Backends such as Karmada customizations.
package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/isolation"
	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/luaapi"
	"github.com/kartalua/karta/object"

	"github.com/kartalua/karta/internal/jsonpatch"
)

// DefaultMaxRequestBytes is the largest request body accepted by default.
const DefaultMaxRequestBytes = 10 << 20

// The paths the handler serves.
const (
	InterpretPath = "/interpret"
	HealthzPath   = "/healthz"
	MetricsPath   = "/metrics"
)

// Options configure New. The zero value gives the defaults.
type Options struct {
	// MaxRequestBytes is the largest /interpret body; a larger one is
	// answered 413 (default DefaultMaxRequestBytes).
	MaxRequestBytes int64
	// Fair bounds the evaluations of each kind (its Karta or
	// customization) that run at once; a request it refuses is answered
	// 429 with Retry-After. Nil bounds nothing.
	Fair *isolation.Fair
	// References resolves the Kartas' references (docs/karta.md,
	// "References"): karta serve's cache of the cluster, the controller's
	// shared one. Nil: every reference is absent. Each reference a call
	// could not resolve is told in a Warning header of the answer.
	References interpreter.Resolver
	// Registry is the registry MetricsPath serves, which the handler's
	// collectors join: karta serve's, shared with its references cache
	// (karta_watch_failing). Nil: a registry of the handler's own.
	Registry *prometheus.Registry
}

// Handler is the webhook's http.Handler: Karmada's interpreter protocol
// at InterpretPath, "ok" at HealthzPath and Prometheus metrics at
// MetricsPath. It is safe for concurrent use.
type Handler struct {
	backends []Backend
	maxBytes int64
	fair     *isolation.Fair
	refs     interpreter.Resolver
	metrics  *metrics
	mux      *http.ServeMux
}

// New returns a Handler that asks backends, in order, for the first one
// that handles a request's kind and operation.
func New(opts Options, backends ...Backend) *Handler {
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	h := &Handler{
		backends: backends,
		maxBytes: opts.MaxRequestBytes,
		fair:     opts.Fair,
		refs:     opts.References,
		metrics:  newMetrics(backends, opts.Registry),
		mux:      http.NewServeMux(),
	}
	h.mux.HandleFunc(InterpretPath, h.serveInterpret)
	h.mux.HandleFunc(HealthzPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok")
	})
	h.mux.Handle(MetricsPath, promhttp.HandlerFor(h.metrics.registry, promhttp.HandlerOpts{}))
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// labels are a request's metric labels.
type labels struct{ op, apiVersion, kind string }

var unknownLabels = labels{unknownLabel, unknownLabel, unknownLabel}

func (h *Handler) serveInterpret(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	h.metrics.inFlight.Inc()
	defer h.metrics.inFlight.Dec()

	warnings := &referenceWarnings{}
	ctx := interpreter.WithResolver(r.Context(), h.refs, warnings.add)
	httpCode, resp, lb := h.interpret(w, r.WithContext(ctx))
	warnings.header(w.Header())
	h.metrics.calls.WithLabelValues(lb.op, lb.apiVersion, lb.kind).Inc()
	if !resp.Successful {
		code := int32(httpCode)
		if resp.Status != nil {
			code = resp.Status.Code
		}
		h.metrics.errors.WithLabelValues(lb.op, lb.apiVersion, lb.kind, fmt.Sprint(code)).Inc()
	}
	switch httpCode {
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", http.MethodPost)
	case http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "1")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpCode)
	_ = json.NewEncoder(w).Encode(&ResourceInterpreterContext{
		TypeMeta: metav1.TypeMeta{APIVersion: ContextAPIVersion, Kind: ContextKind},
		Response: resp,
	}) // a write error means the client went away
	h.metrics.latency.WithLabelValues(lb.op, lb.apiVersion, lb.kind).Observe(time.Since(start).Seconds())
}

// interpret answers one request: the HTTP status (200 unless the request
// is refused before it is read: 405, 413, 415, or before it runs: 429)
// and the response, whose status carries the code of a failed
// interpretation.
func (h *Handler) interpret(w http.ResponseWriter, r *http.Request) (int, *ResourceInterpreterResponse, labels) {
	if r.Method != http.MethodPost {
		return http.StatusMethodNotAllowed, failure(http.StatusMethodNotAllowed, "method %s not allowed: POST a %s", r.Method, ContextKind), unknownLabels
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return http.StatusUnsupportedMediaType, failure(http.StatusUnsupportedMediaType, "content type %q: want application/json", r.Header.Get("Content-Type")), unknownLabels
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return http.StatusRequestEntityTooLarge, failure(http.StatusRequestEntityTooLarge, "request body larger than %d bytes", h.maxBytes), unknownLabels
		}
		return http.StatusBadRequest, failure(http.StatusBadRequest, "reading the request: %v", err), unknownLabels
	}
	// encoding/json builds a value per element: a bounded count first
	// (10 MiB of empty objects would be 3 million maps).
	if err := object.CheckBounds(body, "request body"); err != nil {
		return http.StatusOK, failure(http.StatusBadRequest, "%v", err), unknownLabels
	}
	var review ResourceInterpreterContext
	if err := json.Unmarshal(body, &review); err != nil {
		return http.StatusOK, failure(http.StatusBadRequest, "malformed %s: %v", ContextKind, err), unknownLabels
	}
	if review.APIVersion != ContextAPIVersion || review.Kind != ContextKind {
		return http.StatusOK, failure(http.StatusBadRequest, "apiVersion %q, kind %q: want %s %s", review.APIVersion, review.Kind, ContextAPIVersion, ContextKind), unknownLabels
	}
	if review.Request == nil {
		return http.StatusOK, failure(http.StatusBadRequest, "%s has no request", ContextKind), unknownLabels
	}
	resp, lb := h.handle(r.Context(), review.Request)
	resp.UID = review.Request.UID
	if resp.Status != nil && resp.Status.Code == http.StatusTooManyRequests {
		return http.StatusTooManyRequests, resp, lb
	}
	return http.StatusOK, resp, lb
}

// failure is an unsuccessful response.
func failure(code int32, format string, args ...any) *ResourceInterpreterResponse {
	resp := &ResourceInterpreterResponse{Status: &RequestStatus{Code: code, Message: fmt.Sprintf(format, args...)}}
	return resp
}

// handle runs a decoded request.
func (h *Handler) handle(ctx context.Context, req *ResourceInterpreterRequest) (*ResourceInterpreterResponse, labels) {
	lb := unknownLabels
	op, ok := knownOperation(req.Operation)
	if !ok {
		return failure(http.StatusBadRequest, "unknown operation %q", req.Operation), lb
	}
	lb.op = string(op)
	obj, err := decodeObject(req.Object, "object")
	if err != nil {
		return failure(http.StatusBadRequest, "%v", err), lb
	}
	gvk, err := targetKind(req.Kind, obj)
	if err != nil {
		return failure(http.StatusBadRequest, "%v", err), lb
	}
	if h.knownKind(gvk) {
		lb.apiVersion, lb.kind = gvk.GroupVersion().String(), gvk.Kind
	}
	var backend Backend
	for _, b := range h.backends {
		if b.Handles(gvk, op) {
			backend = b
			break
		}
	}
	if backend == nil {
		return failure(http.StatusNotFound, "no backend interprets %s for %s", op, kindString(gvk)), lb
	}
	release, err := h.fair.Acquire(ctx, kindString(gvk))
	if err != nil {
		return failure(http.StatusTooManyRequests, "%s for %s refused: %v", op, kindString(gvk), err), lb
	}
	resp, code, err := run(ctx, backend, op, req, obj)
	release()
	if err != nil {
		// An operation the customization does not enable, or a hook the
		// Karta does not define for this object (GetReplicas of a kind
		// with two pod-bearing components), is not a failure of the
		// server: the answer is that nothing interprets it, as for a kind
		// no backend handles.
		var nd *interpreter.NotDefinedError
		if code == http.StatusInternalServerError && (errors.Is(err, karmada.ErrNotEnabled) || errors.As(err, &nd)) {
			code = http.StatusNotFound
		}
		if le, ok := h.limitError(ctx, op, err); ok {
			return failure(int32(code), "%s (hook %s) for %s ended on the %s limit: %v", op, op.Hook(), kindString(gvk), le.Kind, err), lb
		}
		if code == http.StatusInternalServerError {
			return failure(int32(code), "%s (hook %s) for %s failed: %v", op, op.Hook(), kindString(gvk), err), lb
		}
		return failure(int32(code), "%s for %s: %v", op, kindString(gvk), err), lb
	}
	resp.Successful = true
	return resp, lb
}

// limitError reports whether a hook's error is a limit, and counts it in
// karta_webhook_limit_errors_total by Karta (a Karmada customization's
// name for those), hook and limit kind. A deadline after the request's
// context ended is the client's doing (it went away) and is not counted.
func (h *Handler) limitError(ctx context.Context, op karmada.Operation, err error) (*luaapi.LimitError, bool) {
	var le *luaapi.LimitError
	if !errors.As(err, &le) {
		return nil, false
	}
	if le.Kind == luaapi.KindDeadline && ctx.Err() != nil {
		return le, true
	}
	name, hook := le.Karta, le.Hook
	if name == "" {
		var ce *karmada.CallError
		if errors.As(err, &ce) {
			name = ce.Customization
		}
	}
	if name == "" {
		name = unknownLabel
	}
	if hook == "" {
		hook = op.Hook()
	}
	h.metrics.limitErrors.WithLabelValues(name, hook, string(le.Kind)).Inc()
	return le, true
}

// run calls the operation; a failure is the code it deserves (400 for a
// request that lacks the operation's inputs, 500 for the hook) and the
// error.
func run(ctx context.Context, b Backend, op karmada.Operation, req *ResourceInterpreterRequest, obj *unstructured.Unstructured) (*ResourceInterpreterResponse, int, error) {
	resp := &ResourceInterpreterResponse{}
	var err error
	switch op {
	case karmada.OpInterpretReplica:
		var n int32
		n, resp.ReplicaRequirements, err = b.GetReplicas(ctx, obj)
		resp.Replicas = &n
	case karmada.OpInterpretComponent:
		resp.Components, err = b.GetComponents(ctx, obj)
	case karmada.OpInterpretStatus:
		var raw []byte
		if raw, err = b.ReflectStatusRaw(ctx, obj); err == nil {
			resp.RawStatus = &runtime.RawExtension{Raw: raw}
		}
	case karmada.OpInterpretHealth:
		var healthy bool
		healthy, err = b.InterpretHealth(ctx, obj)
		resp.Healthy = &healthy
	case karmada.OpInterpretDependency:
		resp.Dependencies, err = b.GetDependencies(ctx, obj)
	case karmada.OpReviseReplica:
		if req.DesiredReplicas == nil {
			return nil, http.StatusBadRequest, errors.New("request.replicas is missing")
		}
		var out *unstructured.Unstructured
		if out, err = b.ReviseReplica(ctx, obj, int64(*req.DesiredReplicas)); err == nil {
			err = setPatch(resp, req.Object.Raw, out)
		}
	case karmada.OpRetain:
		if req.ObservedObject == nil || len(req.ObservedObject.Raw) == 0 {
			return nil, http.StatusBadRequest, errors.New("request.observedObject is missing")
		}
		observed, derr := decodeObject(*req.ObservedObject, "observedObject")
		if derr != nil {
			return nil, http.StatusBadRequest, derr
		}
		var out *unstructured.Unstructured
		if out, err = b.Retain(ctx, obj, observed); err == nil {
			err = setPatch(resp, req.Object.Raw, out)
		}
	case karmada.OpAggregateStatus:
		var out *unstructured.Unstructured
		if out, err = b.AggregateStatus(ctx, obj, req.AggregatedStatus); err == nil {
			err = setPatch(resp, req.Object.Raw, out)
		}
	}
	if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	return resp, 0, nil
}

// setPatch sets the JSON Patch from the request's object to out; equal
// objects get no patch, as in Karmada's own webhooks.
func setPatch(resp *ResourceInterpreterResponse, original []byte, out *unstructured.Unstructured) error {
	result, err := out.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encoding the result: %w", err)
	}
	ops, err := jsonpatch.Create(original, result)
	if err != nil {
		return err
	}
	if len(ops) == 0 {
		return nil
	}
	if resp.Patch, err = json.Marshal(ops); err != nil {
		return err
	}
	pt := PatchTypeJSONPatch
	resp.PatchType = &pt
	return nil
}

func knownOperation(op karmada.Operation) (karmada.Operation, bool) {
	for _, o := range karmada.Operations {
		if o == op {
			return o, true
		}
	}
	return "", false
}

// knownKind reports whether some backend handles some operation of gvk.
func (h *Handler) knownKind(gvk schema.GroupVersionKind) bool {
	for _, b := range h.backends {
		for _, op := range karmada.Operations {
			if b.Handles(gvk, op) {
				return true
			}
		}
	}
	return false
}

// decodeObject reads an object of the request as unstructured (numbers as
// int64 or float64). A duplicate key is an error, as in every file the
// command line reads (object.Decode): which of two values counts would
// otherwise depend on the decoder.
func decodeObject(raw runtime.RawExtension, field string) (*unstructured.Unstructured, error) {
	if len(raw.Raw) == 0 {
		return nil, fmt.Errorf("request.%s is missing", field)
	}
	var m map[string]any
	strict, err := sigsjson.UnmarshalStrict(raw.Raw, &m, sigsjson.DisallowDuplicateFields)
	if err != nil {
		return nil, fmt.Errorf("request.%s: %v", field, err)
	}
	if len(strict) > 0 {
		return nil, fmt.Errorf("request.%s: %w", field, errors.Join(strict...))
	}
	if m == nil {
		return nil, fmt.Errorf("request.%s is null", field)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// targetKind is the request's kind, which the object must agree with; an
// object without apiVersion and kind gets the request's.
func targetKind(kind metav1.GroupVersionKind, obj *unstructured.Unstructured) (schema.GroupVersionKind, error) {
	want := schema.GroupVersionKind{Group: kind.Group, Version: kind.Version, Kind: kind.Kind}
	got := obj.GroupVersionKind()
	switch {
	case want.Kind == "" && got.Kind == "":
		return schema.GroupVersionKind{}, errors.New("neither request.kind nor the object names a kind")
	case want.Kind == "":
		want = got
	case obj.GetAPIVersion() == "" && obj.GetKind() == "":
		obj.SetGroupVersionKind(want)
	case got != want:
		return schema.GroupVersionKind{}, fmt.Errorf("request.kind %s does not match the object's %s", kindString(want), kindString(got))
	}
	if want.Version == "" {
		return schema.GroupVersionKind{}, fmt.Errorf("kind %s has no version", kindString(want))
	}
	return want, nil
}

// kindString is "apiVersion Kind".
func kindString(gvk schema.GroupVersionKind) string {
	return gvk.GroupVersion().String() + " " + gvk.Kind
}
