package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/karmada"
)

const widget = `{
  "apiVersion": "test.karta.io/v1",
  "kind": "Widget",
  "metadata": {"name": "w", "namespace": "ns"},
  "spec": {
    "replicas": 3,
    "paused": false,
    "template": {"spec": {
      "serviceAccountName": "robot",
      "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "250m"}}}],
      "volumes": [{"name": "v", "configMap": {"name": "settings"}}]
    }}
  },
  "status": {"readyReplicas": 3, "phase": "Running"}
}`

var widgetKind = map[string]string{"group": "test.karta.io", "version": "v1", "kind": "Widget"}

func newInterpreter(t testing.TB) *karmada.Interpreter {
	t.Helper()
	data, err := os.ReadFile("testdata/widget.yaml")
	require.NoError(t, err)
	custs, err := karmada.Load(data, "testdata/widget.yaml")
	require.NoError(t, err)
	in, err := karmada.NewInterpreter(custs, karmada.Options{})
	require.NoError(t, err)
	t.Cleanup(in.Close)
	return in
}

func newHandler(t testing.TB, opts Options) *Handler {
	return New(opts, NewKarmada(newInterpreter(t)))
}

// review builds a ResourceInterpreterContext body.
func review(uid string, op karmada.Operation, kind map[string]string, fields map[string]any) []byte {
	req := map[string]any{"uid": uid, "kind": kind, "name": "w", "namespace": "ns", "operation": op, "object": json.RawMessage(widget)}
	for k, v := range fields {
		if v == nil {
			delete(req, k)
		} else {
			req[k] = v
		}
	}
	b, err := json.Marshal(map[string]any{"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterContext", "request": req})
	if err != nil {
		panic(err)
	}
	return b
}

// post sends body to h and returns the HTTP status and the decoded answer.
func post(t testing.TB, h http.Handler, body []byte) (int, *ResourceInterpreterContext) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/interpret", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
	var out ResourceInterpreterContext
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out), w.Body.String())
	assert.Equal(t, "config.karmada.io/v1alpha1", out.APIVersion)
	assert.Equal(t, "ResourceInterpreterContext", out.Kind)
	require.NotNil(t, out.Response, w.Body.String())
	assert.Nil(t, out.Request)
	return w.Code, &out
}

// applyPatch applies the response's patch to the request's object.
func applyPatch(t testing.TB, resp *ResourceInterpreterResponse) string {
	t.Helper()
	if resp.Patch == nil {
		assert.Nil(t, resp.PatchType)
		return widget
	}
	require.NotNil(t, resp.PatchType)
	assert.Equal(t, "JSONPatch", *resp.PatchType)
	p, err := jsonpatch.DecodePatch(resp.Patch)
	require.NoError(t, err, string(resp.Patch))
	out, err := p.Apply([]byte(widget))
	require.NoError(t, err, string(resp.Patch))
	return string(out)
}

// withChanges is the widget JSON with change applied to its decoded form.
func withChanges(t testing.TB, change func(obj map[string]any)) string {
	t.Helper()
	var obj map[string]any
	require.NoError(t, json.Unmarshal([]byte(widget), &obj))
	change(obj)
	b, err := json.Marshal(obj)
	require.NoError(t, err)
	return string(b)
}

func spec(obj map[string]any) map[string]any { return obj["spec"].(map[string]any) }

func TestOperations(t *testing.T) {
	h := newHandler(t, Options{})
	observed := json.RawMessage(`{"apiVersion":"test.karta.io/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"replicas":1,"paused":true}}`)
	items := []map[string]any{
		{"clusterName": "a", "status": map[string]any{"readyReplicas": 2}, "applied": true, "health": "Healthy"},
		{"clusterName": "b", "status": map[string]any{"readyReplicas": 1}},
	}
	tests := []struct {
		op     karmada.Operation
		fields map[string]any
		check  func(t *testing.T, r *ResourceInterpreterResponse)
	}{
		{karmada.OpInterpretReplica, nil, func(t *testing.T, r *ResourceInterpreterResponse) {
			require.NotNil(t, r.Replicas)
			assert.Equal(t, int32(3), *r.Replicas)
			require.NotNil(t, r.ReplicaRequirements)
			cpu := r.ReplicaRequirements.ResourceRequest["cpu"]
			assert.Equal(t, "250m", cpu.String())
		}},
		{karmada.OpInterpretComponent, nil, func(t *testing.T, r *ResourceInterpreterResponse) {
			require.Len(t, r.Components, 1)
			assert.Equal(t, "main", r.Components[0].Name)
			assert.Equal(t, int32(3), r.Components[0].Replicas)
		}},
		{karmada.OpInterpretStatus, nil, func(t *testing.T, r *ResourceInterpreterResponse) {
			require.NotNil(t, r.RawStatus)
			assert.JSONEq(t, `{"readyReplicas":3,"phase":"Running"}`, string(r.RawStatus.Raw))
		}},
		{karmada.OpInterpretHealth, nil, func(t *testing.T, r *ResourceInterpreterResponse) {
			require.NotNil(t, r.Healthy)
			assert.True(t, *r.Healthy)
		}},
		{karmada.OpInterpretDependency, nil, func(t *testing.T, r *ResourceInterpreterResponse) {
			b, err := json.Marshal(r.Dependencies)
			require.NoError(t, err)
			assert.JSONEq(t, `[{"apiVersion":"v1","kind":"ConfigMap","namespace":"ns","name":"settings"},
				{"apiVersion":"v1","kind":"ServiceAccount","namespace":"ns","name":"robot"}]`, string(b))
		}},
		{karmada.OpReviseReplica, map[string]any{"replicas": 7}, func(t *testing.T, r *ResourceInterpreterResponse) {
			assert.JSONEq(t, withChanges(t, func(o map[string]any) { spec(o)["replicas"] = 7 }), applyPatch(t, r))
			assert.JSONEq(t, `[{"op":"replace","path":"/spec/replicas","value":7}]`, string(r.Patch))
		}},
		{karmada.OpRetain, map[string]any{"observedObject": observed}, func(t *testing.T, r *ResourceInterpreterResponse) {
			assert.JSONEq(t, withChanges(t, func(o map[string]any) { spec(o)["paused"] = true }), applyPatch(t, r))
		}},
		{karmada.OpAggregateStatus, map[string]any{"aggregatedStatus": items}, func(t *testing.T, r *ResourceInterpreterResponse) {
			assert.JSONEq(t, withChanges(t, func(o map[string]any) {
				o["status"] = map[string]any{"readyReplicas": 3, "clusters": []string{"a", "b"}}
			}), applyPatch(t, r))
		}},
		{karmada.OpAggregateStatus, nil, func(t *testing.T, r *ResourceInterpreterResponse) { // unchanged: no patch
			assert.Nil(t, r.Patch)
			assert.JSONEq(t, widget, applyPatch(t, r))
		}},
	}
	for i, tt := range tests {
		t.Run(string(tt.op), func(t *testing.T) {
			uid := fmt.Sprintf("uid-%d", i)
			code, out := post(t, h, review(uid, tt.op, widgetKind, tt.fields))
			assert.Equal(t, http.StatusOK, code)
			r := out.Response
			require.True(t, r.Successful, "%+v", r.Status)
			assert.Nil(t, r.Status)
			assert.Equal(t, uid, string(r.UID))
			tt.check(t, r)
		})
	}
}

// An object without apiVersion and kind is of the request's kind, and a
// request without kind is of its object's.
func TestKindFromRequestOrObject(t *testing.T) {
	h := newHandler(t, Options{})
	bare := json.RawMessage(`{"metadata":{"name":"w"},"spec":{"replicas":2,"template":{"spec":{"containers":[]}}}}`)
	_, out := post(t, h, review("a", karmada.OpInterpretReplica, widgetKind, map[string]any{"object": bare}))
	require.True(t, out.Response.Successful, "%+v", out.Response.Status)
	assert.Equal(t, int32(2), *out.Response.Replicas)

	_, out = post(t, h, review("b", karmada.OpInterpretReplica, nil, map[string]any{"kind": nil}))
	require.True(t, out.Response.Successful, "%+v", out.Response.Status)
	assert.Equal(t, int32(3), *out.Response.Replicas)
}

func TestErrors(t *testing.T) {
	h := newHandler(t, Options{})
	gadget := map[string]string{"group": "test.karta.io", "version": "v1", "kind": "Gadget"}
	broken := map[string]string{"group": "test.karta.io", "version": "v1", "kind": "Broken"}
	brokenObj := json.RawMessage(`{"apiVersion":"test.karta.io/v1","kind":"Broken","metadata":{"name":"b"}}`)
	tests := []struct {
		name string
		body []byte
		code int32
		uid  string
		msg  []string
	}{
		{"malformed JSON", []byte(`{"apiVersion": "config.karmada.io/v1alpha1",`), 400, "", []string{"malformed ResourceInterpreterContext"}},
		{"not an object", []byte(`[1]`), 400, "", []string{"malformed"}},
		{"wrong apiVersion", bytes.Replace(review("x", karmada.OpInterpretHealth, widgetKind, nil), []byte("config.karmada.io/v1alpha1"), []byte("config.karmada.io/v2"), 1), 400, "", []string{`apiVersion "config.karmada.io/v2"`}},
		{"wrong kind", bytes.Replace(review("x", karmada.OpInterpretHealth, widgetKind, nil), []byte(`"ResourceInterpreterContext"`), []byte(`"AdmissionReview"`), 1), 400, "", []string{`kind "AdmissionReview"`}},
		{"no request", []byte(`{"apiVersion":"config.karmada.io/v1alpha1","kind":"ResourceInterpreterContext"}`), 400, "", []string{"has no request"}},
		{"unknown operation", review("u1", "Explode", widgetKind, nil), 400, "u1", []string{`unknown operation "Explode"`}},
		{"no object", review("u2", karmada.OpInterpretHealth, widgetKind, map[string]any{"object": nil}), 400, "u2", []string{"request.object is missing"}},
		{"object not an object", review("u3", karmada.OpInterpretHealth, widgetKind, map[string]any{"object": 5}), 400, "u3", []string{"request.object"}},
		{"kind mismatch", review("u4", karmada.OpInterpretHealth, gadget, nil), 400, "u4", []string{"test.karta.io/v1 Gadget", "test.karta.io/v1 Widget"}},
		{"unknown GVK", review("u5", karmada.OpInterpretHealth, gadget, map[string]any{"object": json.RawMessage(`{"apiVersion":"test.karta.io/v1","kind":"Gadget"}`)}), 404, "u5", []string{"no backend", "InterpretHealth", "test.karta.io/v1 Gadget"}},
		{"operation not scripted", review("u6", karmada.OpRetain, broken, map[string]any{"object": brokenObj, "observedObject": brokenObj}), 404, "u6", []string{"Retain", "test.karta.io/v1 Broken"}},
		{"hook failure", review("u7", karmada.OpInterpretHealth, broken, map[string]any{"object": brokenObj}), 500, "u7", []string{"InterpretHealth", "test.karta.io/v1 Broken", "boom"}},
		{"revise without replicas", review("u8", karmada.OpReviseReplica, widgetKind, nil), 400, "u8", []string{"request.replicas is missing"}},
		{"retain without observed", review("u9", karmada.OpRetain, widgetKind, nil), 400, "u9", []string{"request.observedObject is missing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := post(t, h, tt.body)
			assert.Equal(t, http.StatusOK, code)
			r := out.Response
			assert.False(t, r.Successful)
			assert.Equal(t, tt.uid, string(r.UID))
			require.NotNil(t, r.Status)
			assert.Equal(t, tt.code, r.Status.Code)
			for _, m := range tt.msg {
				assert.Contains(t, r.Status.Message, m)
			}
			assert.Nil(t, r.Patch)
			assert.Nil(t, r.Healthy)
		})
	}
}

func TestHTTPErrors(t *testing.T) {
	h := newHandler(t, Options{MaxRequestBytes: 1024})
	do := func(method, contentType string, body []byte) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, "/interpret", bytes.NewReader(body))
		if contentType != "" {
			r.Header.Set("Content-Type", contentType)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	check := func(t *testing.T, w *httptest.ResponseRecorder, code int, msg string) {
		t.Helper()
		assert.Equal(t, code, w.Code)
		var out ResourceInterpreterContext
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out))
		require.NotNil(t, out.Response)
		assert.False(t, out.Response.Successful)
		require.NotNil(t, out.Response.Status)
		assert.Equal(t, int32(code), out.Response.Status.Code)
		assert.Contains(t, out.Response.Status.Message, msg)
	}
	t.Run("GET", func(t *testing.T) {
		w := do(http.MethodGet, "", nil)
		check(t, w, http.StatusMethodNotAllowed, "method GET not allowed")
		assert.Equal(t, "POST", w.Header().Get("Allow"))
	})
	t.Run("not JSON", func(t *testing.T) {
		check(t, do(http.MethodPost, "text/plain", review("x", karmada.OpInterpretHealth, widgetKind, nil)), http.StatusUnsupportedMediaType, "text/plain")
	})
	t.Run("oversized", func(t *testing.T) {
		body := review("x", karmada.OpInterpretHealth, widgetKind, map[string]any{"name": strings.Repeat("x", 2048)})
		check(t, do(http.MethodPost, "application/json", body), http.StatusRequestEntityTooLarge, "larger than 1024 bytes")
	})
	t.Run("JSON with charset and at the limit", func(t *testing.T) {
		body := review("x", karmada.OpInterpretHealth, widgetKind, nil)
		require.Less(t, len(body), 1024)
		w := do(http.MethodPost, "application/json; charset=utf-8", body)
		assert.Equal(t, http.StatusOK, w.Code)
		assert.Contains(t, w.Body.String(), `"successful":true`)
	})
}

// The default limit is 10 MiB.
func TestDefaultLimit(t *testing.T) {
	h := newHandler(t, Options{})
	assert.Equal(t, int64(10<<20), h.maxBytes)
	pad := strings.Repeat("x", 10<<20)
	code, out := post(t, h, review("x", karmada.OpInterpretHealth, widgetKind, map[string]any{"name": pad}))
	assert.Equal(t, http.StatusRequestEntityTooLarge, code)
	assert.False(t, out.Response.Successful)
}

func TestHealthz(t *testing.T) {
	h := newHandler(t, Options{})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "ok", w.Body.String())
}

func scrape(t *testing.T, h http.Handler) string {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, w.Code)
	assert.Contains(t, w.Header().Get("Content-Type"), "text/plain")
	return w.Body.String()
}

func TestMetrics(t *testing.T) {
	h := newHandler(t, Options{})
	for range 3 {
		post(t, h, review("x", karmada.OpInterpretHealth, widgetKind, nil))
	}
	post(t, h, review("x", karmada.OpReviseReplica, widgetKind, nil)) // 400: no replicas
	brokenObj := json.RawMessage(`{"apiVersion":"test.karta.io/v1","kind":"Broken"}`)
	post(t, h, review("x", karmada.OpInterpretHealth, nil, map[string]any{"kind": nil, "object": brokenObj})) // 500
	post(t, h, review("x", karmada.OpInterpretHealth, nil, map[string]any{"kind": nil, "object": json.RawMessage(`{"apiVersion":"x/v1","kind":"Nope"}`)}))
	post(t, h, []byte("{"))

	m := scrape(t, h)
	for _, line := range []string{
		`karta_webhook_calls_total{api_version="test.karta.io/v1",kind="Widget",operation="InterpretHealth"} 3`,
		`karta_webhook_calls_total{api_version="test.karta.io/v1",kind="Widget",operation="ReviseReplica"} 1`,
		`karta_webhook_errors_total{api_version="test.karta.io/v1",code="400",kind="Widget",operation="ReviseReplica"} 1`,
		`karta_webhook_errors_total{api_version="test.karta.io/v1",code="500",kind="Broken",operation="InterpretHealth"} 1`,
		// unknown kinds and malformed requests do not make label values
		`karta_webhook_errors_total{api_version="unknown",code="404",kind="unknown",operation="InterpretHealth"} 1`,
		`karta_webhook_errors_total{api_version="unknown",code="400",kind="unknown",operation="unknown"} 1`,
		`karta_webhook_call_duration_seconds_count{api_version="test.karta.io/v1",kind="Widget",operation="InterpretHealth"} 3`,
		`karta_webhook_in_flight_requests 0`,
	} {
		assert.Contains(t, m, line+"\n")
	}
	assert.NotContains(t, m, `errors_total{api_version="test.karta.io/v1",code="200"`)
	assert.NotContains(t, m, "Nope")
	assert.NotContains(t, m, "pool_size", "karmada.Interpreter reports no pool")
}

// statsBackend is a Backend that reports its pool.
type statsBackend struct{ Karmada }

func (statsBackend) PoolStats() PoolStats { return PoolStats{Size: 8, InUse: 2} }

func TestPoolMetrics(t *testing.T) {
	h := New(Options{}, statsBackend{NewKarmada(newInterpreter(t))})
	m := scrape(t, h)
	assert.Contains(t, m, `karta_webhook_pool_size{backend="0"} 8`+"\n")
	assert.Contains(t, m, `karta_webhook_pool_in_use{backend="0"} 2`+"\n")
}

// The first backend that handles a kind and operation answers.
func TestBackendOrder(t *testing.T) {
	in := newInterpreter(t)
	h := New(Options{}, onlyHealth{NewKarmada(in)}, NewKarmada(in))
	_, out := post(t, h, review("x", karmada.OpInterpretHealth, widgetKind, nil))
	require.True(t, out.Response.Successful)
	assert.False(t, *out.Response.Healthy, "the first backend answers")
	_, out = post(t, h, review("x", karmada.OpInterpretReplica, widgetKind, nil))
	require.True(t, out.Response.Successful)
	assert.Equal(t, int32(3), *out.Response.Replicas)
}

// onlyHealth handles InterpretHealth alone, and finds everything unhealthy.
type onlyHealth struct{ Karmada }

func (onlyHealth) Handles(_ schema.GroupVersionKind, op karmada.Operation) bool {
	return op == karmada.OpInterpretHealth
}

func (onlyHealth) InterpretHealth(context.Context, *unstructured.Unstructured) (bool, error) {
	return false, nil
}

// Concurrent requests over loopback all get their own, correct answers.
func TestConcurrentRequests(t *testing.T) {
	srv := httptest.NewServer(newHandler(t, Options{}))
	defer srv.Close()
	client := srv.Client()
	const workers, perWorker = 64, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for g := range workers {
		wg.Go(func() {
			for i := range perWorker {
				if err := concurrentCall(client, srv.URL, g, i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func concurrentCall(client *http.Client, url string, g, i int) error {
	uid := fmt.Sprintf("%d-%d", g, i)
	replicas := int32(g*100 + i)
	var body []byte
	op := karmada.Operations[(g+i)%3]
	switch op {
	case karmada.OpRetain:
		body = review(uid, op, widgetKind, map[string]any{"observedObject": json.RawMessage(`{"spec":{"paused":true}}`)})
	case karmada.OpInterpretReplica:
		obj := strings.Replace(widget, `"replicas": 3`, fmt.Sprintf(`"replicas": %d`, replicas), 1)
		body = review(uid, op, widgetKind, map[string]any{"object": json.RawMessage(obj)})
	default:
		op = karmada.OpReviseReplica
		body = review(uid, op, widgetKind, map[string]any{"replicas": replicas})
	}
	resp, err := client.Post(url+"/interpret", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var out ResourceInterpreterContext
	if err := json.Unmarshal(data, &out); err != nil || out.Response == nil {
		return fmt.Errorf("%s: bad answer %s: %v", uid, data, err)
	}
	r := out.Response
	if !r.Successful || string(r.UID) != uid {
		return fmt.Errorf("%s: %s", uid, data)
	}
	switch op {
	case karmada.OpInterpretReplica:
		if r.Replicas == nil || *r.Replicas != replicas {
			return fmt.Errorf("%s: replicas: %s", uid, data)
		}
	case karmada.OpRetain:
		if want := `[{"op":"replace","path":"/spec/paused","value":true}]`; string(r.Patch) != want {
			return fmt.Errorf("%s: patch %s, want %s", uid, r.Patch, want)
		}
	case karmada.OpReviseReplica:
		if want := fmt.Sprintf(`[{"op":"replace","path":"/spec/replicas","value":%d}]`, replicas); string(r.Patch) != want {
			return fmt.Errorf("%s: patch %s, want %s", uid, r.Patch, want)
		}
	}
	return nil
}
