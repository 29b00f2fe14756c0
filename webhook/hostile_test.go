package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/luaapi"

	"github.com/kartalua/karta/internal/heapwatch"
)

// The hostile-Karta suite of the webhook (issue 12): a control plane
// serves other teams' Kartas, so a Karta whose jq amplifies its input
// (a string multiplied, a value shared and serialised, doubled in a
// reduce, compared, flattened or sorted) must end on the call's limits
// with a failed answer that names the Karta, the hook and the limit,
// within twice the deadline and without growing the heap, while the
// built-ins beside it keep answering correctly and fast.

// The limits the suite compiles the hostile Kartas with: as the
// interpreter's hostile-script suite, a 2s deadline (the race detector on
// a loaded 2-core runner stays within twice of it) and a 32 MiB memory
// guard, under which the live heap must grow by less than 64 MiB.
const (
	hostileTimeout    = 2 * time.Second
	hostileMemory     = 32 << 20
	hostileHeapGrowth = 64 << 20
)

// shared12 is a value that shares its subtrees 4^12 times: [.,.,.,.] twelve
// times over.
var shared12 = strings.Repeat("[.,.,.,.] | ", 12)

// hostileFamilies are the amplifications of issue 12, each with the limits
// it may end on (the deadline always may: on a slow machine it comes
// first, and it is as right an ending).
var hostileFamilies = []struct {
	name  string
	expr  string
	kinds []luaapi.LimitKind
}{
	{"repeat", `("x" * 100000000) | length > 0`, []luaapi.LimitKind{luaapi.KindMemory}},
	{"tojson", shared12 + `tojson | length > 0`, []luaapi.LimitKind{luaapi.KindInstructions, luaapi.KindMemory}},
	{"reduce", `reduce (` + strings.Repeat("1,", 39) + `1) as $x ("ab"; . + .) | length > 0`, []luaapi.LimitKind{luaapi.KindMemory}},
	{"equal", shared12 + `. == .`, []luaapi.LimitKind{luaapi.KindInstructions, luaapi.KindMemory}},
	{"flatten", shared12 + `flatten | length > 0`, []luaapi.LimitKind{luaapi.KindInstructions, luaapi.KindMemory}},
	{"sort", shared12 + `sort | length > 0`, []luaapi.LimitKind{luaapi.KindInstructions, luaapi.KindMemory}},
}

// hostileCase is one hostile Karta: a family as a byExpression ("expr") or
// as a luaScript override of InterpretStatus calling jq ("lua"), each of
// its own kind.
type hostileCase struct {
	karta string
	kind  string // the Kind of the objects it interprets
	kinds []luaapi.LimitKind
}

const hostileGroup = "hostile.example.com"

// hostileKarta is the YAML of a hostile Karta.
func hostileKarta(name, kind, expr, luaScript string) string {
	quoted := strings.ReplaceAll(expr, "'", "''")
	text := fmt.Sprintf(`apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: %s}
spec:
  structureDefinition:
    rootComponent:
      name: batch
      kind: {group: %s, version: v1alpha1, kind: %s}
      statusDefinition:
        statusMappings:
          running:
          - byExpression: {expression: '%s', expectedResult: "true"}
`, name, hostileGroup, kind, quoted)
	if luaScript != "" {
		text += "  luaScript: |\n"
		for _, line := range strings.Split(luaScript, "\n") {
			text += "    " + line + "\n"
		}
	}
	return text
}

// hostileScript calls jq(expr, obj), then the generated hook.
const hostileScript = `function InterpretStatus(obj)
  local out = jq([==[%s]==], obj)
  return karta.generated.InterpretStatus(obj)
end`

// hostileRegistry is the built-ins and a hostile Karta per family and
// form, compiled with the suite's limits.
func hostileRegistry(t *testing.T) (*interpreter.Registry, []hostileCase) {
	t.Helper()
	reg, err := builtin.Registry(interpreter.Options{})
	require.NoError(t, err)
	opts := interpreter.Options{Limits: interpreter.Limits{Timeout: hostileTimeout, MaxMemory: hostileMemory}}
	var cases []hostileCase
	for _, f := range hostileFamilies {
		for _, form := range []string{"expr", "lua"} {
			c := hostileCase{karta: "hostile-" + f.name + "-" + form, kinds: append(slices.Clone(f.kinds), luaapi.KindDeadline)}
			c.kind = "Hostile" + strings.ToUpper(f.name[:1]) + f.name[1:] + strings.ToUpper(form[:1]) + form[1:]
			text := hostileKarta(c.karta, c.kind, f.expr, "")
			if form == "lua" {
				text = hostileKarta(c.karta, c.kind, `.status.phase == "Running"`, fmt.Sprintf(hostileScript, f.expr))
			}
			ks, err := karta.Load([]byte(text), c.karta)
			require.NoError(t, err)
			require.Len(t, ks, 1)
			p, err := interpreter.Compile(ks[0], opts)
			require.NoError(t, err, c.karta)
			require.Nil(t, reg.Put(p), "a kind of its own")
			cases = append(cases, c)
		}
	}
	return reg, cases
}

// hostileObject is the BatchRun example as an object of a hostile kind.
func hostileObject(t *testing.T, kind string) json.RawMessage {
	t.Helper()
	data, err := os.ReadFile("../examples/custom-hook/batchrun-degraded.yaml")
	require.NoError(t, err)
	var obj map[string]any
	require.NoError(t, sigsyaml.Unmarshal(data, &obj))
	obj["apiVersion"], obj["kind"] = hostileGroup+"/v1alpha1", kind
	raw, err := json.Marshal(obj)
	require.NoError(t, err)
	return raw
}

// hostileReview is a request of op about an object of a hostile kind.
func hostileReview(t *testing.T, uid string, op karmada.Operation, kind string) []byte {
	t.Helper()
	req := map[string]any{
		"uid": uid, "operation": op, "object": hostileObject(t, kind),
		"kind": map[string]string{"group": hostileGroup, "version": "v1alpha1", "kind": kind},
	}
	if op == karmada.OpAggregateStatus {
		req["aggregatedStatus"] = []map[string]any{{"clusterName": "a", "applied": true, "status": map[string]any{"phase": "Running"}}}
	}
	b, err := json.Marshal(map[string]any{"apiVersion": ContextAPIVersion, "kind": ContextKind, "request": req})
	require.NoError(t, err)
	return b
}

// call POSTs a review to a server and decodes the answer.
func call(client *http.Client, url string, body []byte) (*ResourceInterpreterResponse, error) {
	resp, err := client.Post(url+InterpretPath, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var out ResourceInterpreterContext
	if err := json.Unmarshal(data, &out); err != nil || out.Response == nil {
		return nil, fmt.Errorf("bad answer (HTTP %d) %s: %v", resp.StatusCode, data, err)
	}
	return out.Response, nil
}

// checkLimitAnswer checks a hostile request's answer: failed, code 500,
// naming the Karta, the hook and a limit of the expected kinds. It only
// asserts, so that the clients' goroutines may call it.
func checkLimitAnswer(t *testing.T, c hostileCase, resp *ResourceInterpreterResponse) {
	t.Helper()
	assert.False(t, resp.Successful, "a hostile Karta's call fails")
	if !assert.NotNil(t, resp.Status) {
		return
	}
	assert.EqualValues(t, http.StatusInternalServerError, resp.Status.Code)
	msg := resp.Status.Message
	// AggregateStatus reaches InterpretStatus through a member's status:
	// karta "x": AggregateStatus: statusItems[0] (cluster "a"): InterpretStatus: ...
	assert.Contains(t, msg, fmt.Sprintf(`karta %q: `, c.karta), "names the Karta")
	assert.Equal(t, 1, strings.Count(msg, fmt.Sprintf(`karta %q`, c.karta)), "once: %s", msg)
	assert.Contains(t, msg, "InterpretStatus: ", "names the hook that crossed the limit")
	kind := limitKindOf(msg)
	assert.Contains(t, c.kinds, kind, "the limit: %s", msg)
	assert.Contains(t, msg, fmt.Sprintf("ended on the %s limit", kind))
	assert.Nil(t, resp.Healthy)
	assert.Nil(t, resp.Patch)
}

var limitKindRE = regexp.MustCompile(`ended on the ([a-z ]+) limit`)

// limitKindOf reads the limit kind from an answer's message.
func limitKindOf(msg string) luaapi.LimitKind {
	m := limitKindRE.FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	return luaapi.LimitKind(m[1])
}

// measureCall runs f and returns what it cost the process.
func measureCall(f func()) heapwatch.Cost { return heapwatch.Measure(f) }

const builtinJob = "../examples/pytorchjob/running.yaml"

// builtinLatencies sends n InterpretHealth requests about a built-in kind,
// one after the other, each of which must be answered correctly, and
// returns their latencies; more, when set, keeps it going past n while it
// returns true (at most max requests in all).
func builtinLatencies(t *testing.T, client *http.Client, url string, n, limit int, more func() bool) []time.Duration {
	t.Helper()
	body := kartaReview(t, "builtin", karmada.OpInterpretHealth, builtinJob, nil)
	var lat []time.Duration
	for i := 0; i < limit && (i < n || (more != nil && more())); i++ {
		start := time.Now()
		resp, err := call(client, url, body)
		lat = append(lat, time.Since(start))
		require.NoError(t, err)
		require.True(t, resp.Successful, "a built-in answers: %+v", resp.Status)
		require.NotNil(t, resp.Healthy)
		require.True(t, *resp.Healthy, "a Running PyTorchJob is healthy")
	}
	return lat
}

func p50(lat []time.Duration) time.Duration {
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[len(s)/2]
}

// limitCounts reads karta_webhook_limit_errors_total by Karta, summed
// over hooks and kinds.
func limitCounts(t *testing.T, h http.Handler) map[string]float64 {
	t.Helper()
	re := regexp.MustCompile(`(?m)^karta_webhook_limit_errors_total\{hook="([^"]*)",karta="([^"]*)",kind="([^"]*)"\} (\S+)$`)
	out := map[string]float64{}
	for _, m := range re.FindAllStringSubmatch(scrape(t, h), -1) {
		v, err := strconv.ParseFloat(m[4], 64)
		require.NoError(t, err)
		out[m[2]] += v
	}
	return out
}

// TestHostileKartas: `karta serve`'s handler, on loopback, with a hostile
// Karta per amplification family and form beside the built-ins.
func TestHostileKartas(t *testing.T) {
	reg, cases := hostileRegistry(t)
	h := New(Options{}, Kartas{Registry: reg})
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := srv.Client()

	// The built-ins' latency with nothing else going on (after a warm-up).
	builtinLatencies(t, client, srv.URL, 20, 20, nil)
	baseline := p50(builtinLatencies(t, client, srv.URL, 200, 200, nil))

	// Each hostile request alone: a failed answer naming the Karta, the
	// hook and the limit, within twice the deadline, the heap growing
	// less than 64 MiB.
	want := map[string]float64{}
	for _, c := range cases {
		t.Run(c.karta, func(t *testing.T) {
			body := hostileReview(t, c.karta, karmada.OpInterpretHealth, c.kind)
			var (
				resp *ResourceInterpreterResponse
				err  error
			)
			cost := measureCall(func() { resp, err = call(client, srv.URL, body) })
			require.NoError(t, err)
			want[c.karta]++
			t.Logf("%v (CPU %v), heap +%d MiB: %s", cost.Wall, cost.CPU, cost.Growth>>20, resp.Status.Message)
			heapwatch.AssertPrompt(t, cost, hostileTimeout, "the request")
			assert.Less(t, cost.Growth, uint64(hostileHeapGrowth), "heap growth during the request")
			checkLimitAnswer(t, c, resp)
		})
	}

	// The hostile Kartas again, through AggregateStatus (which ranks the
	// members' statuses with InterpretStatus), from several clients at
	// once, while a client asks about a built-in: it keeps getting the
	// right answer, and its median latency stays within a generous factor
	// of the baseline. Half the cores go to the hostile requests, so that
	// the built-in's requests measure the server, not a CPU fight.
	aggregate := make([][]byte, len(cases))
	for i, c := range cases {
		aggregate[i] = hostileReview(t, c.karta, karmada.OpAggregateStatus, c.kind)
	}
	hostileClients := max(1, runtime.GOMAXPROCS(0)/2)
	var hostileDone atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range hostileClients {
		wg.Go(func() {
			for j, c := range cases {
				if j%hostileClients != i {
					continue
				}
				resp, err := call(client, srv.URL, aggregate[j])
				if assert.NoError(t, err) {
					checkLimitAnswer(t, c, resp)
				}
				mu.Lock()
				want[c.karta]++
				mu.Unlock()
			}
			hostileDone.Add(1)
		})
	}
	loaded := builtinLatencies(t, client, srv.URL, 50, 100000, func() bool { return hostileDone.Load() < int64(hostileClients) })
	wg.Wait()
	t.Logf("built-in InterpretHealth p50: %v alone, %v beside the hostile requests (%d requests)", baseline, p50(loaded), len(loaded))
	assert.Less(t, p50(loaded), 20*baseline, "the built-ins' median latency under hostile load")

	// Every limit error is counted by Karta; the built-ins have none.
	assert.Equal(t, want, limitCounts(t, h))
	m := scrape(t, h)
	assert.Regexp(t, `(?m)^karta_webhook_limit_errors_total\{hook="InterpretStatus",karta="hostile-repeat-expr",kind="memory"\} 2$`, m)
	assert.NotContains(t, m, `karta="pytorchjob"`)
}

const loopingCustomization = `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: looping
spec:
  target:
    apiVersion: test.karta.io/v1
    kind: Widget
  customizations:
    healthInterpretation:
      luaScript: |
        function InterpretHealth(obj)
          while true do end
        end
`

// A Karmada customization's limit is counted under its name, with the
// operation's hook; other failures are not limits.
func TestLimitErrorsOfCustomizations(t *testing.T) {
	custs, err := karmada.Load([]byte(loopingCustomization), "looping.yaml")
	require.NoError(t, err)
	in, err := karmada.NewInterpreter(custs, karmada.Options{Limits: luaapi.Limits{MaxInstructions: 100000, Timeout: time.Minute}})
	require.NoError(t, err)
	t.Cleanup(in.Close)
	h := New(Options{}, NewKarmada(in))

	_, out := post(t, h, review("u1", karmada.OpInterpretHealth, widgetKind, nil))
	require.NotNil(t, out.Response.Status)
	assert.False(t, out.Response.Successful)
	assert.EqualValues(t, http.StatusInternalServerError, out.Response.Status.Code)
	assert.Equal(t, `InterpretHealth (hook InterpretHealth) for test.karta.io/v1 Widget ended on the instructions limit: `+
		`customization "looping": InterpretHealth: instruction limit 100000 exceeded`, out.Response.Status.Message)

	_, out = post(t, h, review("u2", karmada.OpReviseReplica, widgetKind, map[string]any{"replicas": 2}))
	assert.False(t, out.Response.Successful, "not scripted: no backend")

	m := scrape(t, h)
	assert.Contains(t, m, `karta_webhook_limit_errors_total{hook="InterpretHealth",karta="looping",kind="instructions"} 1`+"\n")
	assert.Equal(t, 1, strings.Count(m, "karta_webhook_limit_errors_total{"))
}
