//go:build integration

// Package chaos holds the fault-injection tests of karta controller
// (docs/controller.md, "Under faults"): the API server killed and
// relaunched, etcd paused, the leader killed, a churn of a thousand
// workloads. They run on a private etcd and kube-apiserver (hack/testenv.sh
// with a state directory and ports of their own), since killing the shared
// test cluster's API server would break the tests of the packages that run
// beside them.
package chaos

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kartalua/karta/controller"
	"github.com/kartalua/karta/internal/testenv"
	"github.com/kartalua/karta/internal/testobj"
)

// recoveryBound is the promise of docs/controller.md: a change made after
// the API server returns is reconciled within it.
const recoveryBound = 10 * time.Second

// readinessBound is watchguard.DefaultBound, the controller's
// WatchFailureBound: /readyz fails once the server has left the watches
// unanswered longer.
const readinessBound = 10 * time.Second

var (
	trainJobGVR     = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "trainjobs"}
	crdGVR          = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	volcanoGroupGVR = schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "podgroups"}
)

// chaos is the state the faults share: one private cluster, one controller
// (a second for the leader's death), a Karta that is changed after each
// fault and TrainJobs (the tutorial's kind, whose PodGroup forms without
// pods) created after each.
type chaos struct {
	t         *testing.T
	c         *privateCluster
	dyn       dynamic.Interface
	cs        kubernetes.Interface
	ctrl      *controllerProc
	karta     string
	workloads atomic.Int32
}

func TestIntegrationChaos(t *testing.T) {
	bin := buildKarta(t)
	c := startPrivateCluster(t)
	testenv.InstallCRDs(t, c.cfg)
	dyn, err := dynamic.NewForConfig(c.cfg)
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(c.cfg)
	require.NoError(t, err)
	// No controller-manager here makes the default ServiceAccount, which
	// pods need.
	_, err = cs.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Create(t.Context(),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	ch := &chaos{t: t, c: c, dyn: dyn, cs: cs, karta: "chaos-trainjob"}
	ch.installTrainJobCRD()
	ch.createKarta()
	ch.ctrl = startController(t, bin, c, "chaos-a")
	ch.waitReady(ch.ctrl, "ok: leader", 2*time.Minute)
	_, ok := waitFor(t.Context(), time.Minute, func() bool { return ch.observed(t.Context()) >= 1 })
	require.True(t, ok, "the Karta not compiled; log:\n%s", ch.ctrl.log.String())

	for _, d := range []time.Duration{5 * time.Second, 20 * time.Second, 90 * time.Second} {
		t.Run(fmt.Sprintf("apiserver-down-%s", d), func(t *testing.T) { ch.apiServerOutage(t, d) })
	}
	t.Run("etcd-paused-15s", ch.etcdPaused)
	t.Run("churn-1000", ch.churn)
	t.Run("leader-killed", func(t *testing.T) { ch.leaderKilled(t, bin) })
}

// apiServerOutage kills kube-apiserver, samples /readyz and the metrics
// while it is down, relaunches it, and measures how long a Karta change and
// a new TrainJob made after its return take to be reconciled.
func (ch *chaos) apiServerOutage(t *testing.T, outage time.Duration) {
	p := ch.ctrl
	errorsBefore := metric(p.scrape(), `karta_watch_errors_total{resource="kartas.run.ai"}`)
	failingBefore := strings.Count(p.log.String(), `msg="watch failing: kartas.run.ai"`)
	recoveredBefore := strings.Count(p.log.String(), `msg="watch recovered: kartas.run.ai"`)

	ch.c.must(t, "kill", "kube-apiserver")
	down := time.Now()
	logStart := len(p.log.String())
	defer func() {
		if t.Failed() {
			t.Logf("the controller's watch log since the kill:\n%s", watchLines(p.log.String()[logStart:]))
		}
	}()
	type sample struct {
		at   time.Duration
		code int
		body string
	}
	var samples []sample
	var syncedDuring []string
	for time.Since(down) < outage {
		code, body := p.readyz()
		at := time.Since(down)
		samples = append(samples, sample{at, code, body})
		if at > readinessBound+5*time.Second && len(syncedDuring) == 0 {
			s := p.scrape()
			syncedDuring = []string{
				fmt.Sprint(metric(s, "karta_controller_synced")),
				fmt.Sprint(metric(s, "karta_gang_output_synced")),
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	ch.c.must(t, "relaunch", "kube-apiserver")
	back := time.Now()
	t.Logf("API server down %s (relaunched and ready %s after the kill)", outage, describe(back.Sub(down)))

	// The readiness answers while it was down: ready within the bound,
	// not ready past it (with slack for a loaded machine), saying why.
	sawNotReady := false
	for _, s := range samples {
		switch {
		case s.at < readinessBound-time.Second:
			assert.Equal(t, 200, s.code, "at %s: %s", describe(s.at), s.body)
		case s.at > readinessBound+2*time.Second:
			if assert.Equal(t, 503, s.code, "at %s: %s", describe(s.at), s.body) {
				assert.Contains(t, s.body, "not ready: the API server has not answered the watches of ")
				sawNotReady = true
			}
		}
	}
	if outage > readinessBound+3*time.Second {
		assert.True(t, sawNotReady, "no readiness sample past the bound")
		assert.Equal(t, []string{"0", "0"}, syncedDuring, "karta_controller_synced and karta_gang_output_synced during the outage")
	}

	// A change made after the return, reconciled within the bound.
	took := ch.changeAndMeasure(t, p)
	t.Logf("after a %s outage: Karta reconciled and PodGroup written %s after the server's return", outage, describe(took))
	assert.Less(t, took, recoveryBound, "recovery after a %s outage", outage)

	ch.waitReady(p, "ok: ", recoveryBound)
	s := p.scrape()
	assert.Equal(t, 1.0, metric(s, "karta_controller_synced"))
	assert.Equal(t, 1.0, metric(s, "karta_gang_output_synced"))
	assert.Greater(t, metric(s, `karta_watch_errors_total{resource="podgroups.scheduling.volcano.sh"}`), 0.0)
	logs := p.log.String()
	failing := strings.Count(logs, `msg="watch failing: kartas.run.ai"`) - failingBefore
	recovered := strings.Count(logs, `msg="watch recovered: kartas.run.ai"`) - recoveredBefore
	// The Kartas' watch has a client of its own (cmd/karta's
	// newKartaClient): it is retried, and fails, within a second or two of
	// the kill, not after the workload kinds' watches queued on their
	// client's rate limiter (up to 9 s, longer than the short outage).
	assert.Greater(t, metric(s, `karta_watch_errors_total{resource="kartas.run.ai"}`), errorsBefore)
	assert.Equal(t, 1, failing, "one line when the watch starts failing")
	assert.Equal(t, failing, recovered, "a recovery line for each failing one")
	// A call waiting for the server is one failure, however long it
	// waits: no "still failing" line during a plain outage.
	assert.NotContains(t, logs, `msg="watch still failing: kartas.run.ai"`)
	ch.waitWatchesBack(t, p, back)
}

// waitWatchesBack waits until every watch of the controller has recovered
// (no karta_watch_failing series left), so that the next fault starts from
// a whole controller: readiness alone does not say so, as it reports only
// the watches failing past its bound. It measures how long after since
// (the server's return) that took.
func (ch *chaos) waitWatchesBack(t *testing.T, p *controllerProc, since time.Time) {
	t.Helper()
	var failing []string
	_, ok := waitFor(t.Context(), 2*time.Minute, func() bool {
		failing = failing[:0]
		for line := range strings.Lines(p.scrape()) {
			if strings.HasPrefix(line, "karta_watch_failing{") {
				failing = append(failing, strings.TrimSpace(line))
			}
		}
		return len(failing) == 0
	})
	t.Logf("every watch recovered %s after the server's return", describe(time.Since(since)))
	require.True(t, ok, "watches still failing 2m after the server's return: %s", failing)
}

// etcdPaused stops etcd (SIGSTOP: connections stay open, nothing answers)
// for 15 s; after SIGCONT a change is reconciled within the bound.
func (ch *chaos) etcdPaused(t *testing.T) {
	ch.c.must(t, "pause", "etcd")
	paused := time.Now()
	resumed := false
	defer func() {
		if !resumed {
			ch.c.must(t, "resume", "etcd")
		}
	}()
	time.Sleep(15 * time.Second)
	code, body := ch.ctrl.readyz()
	t.Logf("/readyz with etcd paused %s: %d %s", describe(time.Since(paused)), code, body)
	ch.c.must(t, "resume", "etcd")
	resumed = true
	took := ch.changeAndMeasure(t, ch.ctrl)
	t.Logf("after etcd paused 15s: reconciled %s after it resumed", describe(took))
	assert.Less(t, took, recoveryBound)
	ch.waitReady(ch.ctrl, "ok: ", recoveryBound)
	ch.waitWatchesBack(t, ch.ctrl, paused.Add(15*time.Second))
}

// churn creates a thousand pods, which the gang output watches (every pod,
// to link it to its workload), and deletes them: the controller keeps up (a
// TrainJob created right after gets its PodGroup within the bound), stays
// ready, and its heap comes back.
func (ch *chaos) churn(t *testing.T) {
	const n = 1000
	p := ch.ctrl
	ctx := t.Context()
	heapBefore := metric(p.scrape(), "go_memstats_heap_inuse_bytes")
	pods := ch.cs.CoreV1().Pods(metav1.NamespaceDefault)

	start := time.Now()
	parallel(t, n, func(i int) error {
		_, err := pods.Create(ctx, churnPod(fmt.Sprintf("churn-%d", i)), metav1.CreateOptions{})
		return err
	})
	created := time.Since(start)
	took := ch.changeAndMeasure(t, p)
	t.Logf("%d pods created in %s; then a change reconciled in %s", n, describe(created), describe(took))
	assert.Less(t, took, recoveryBound, "kept up with %d pods", n)
	heapPeak := metric(p.scrape(), "go_memstats_heap_inuse_bytes")

	start = time.Now()
	parallel(t, n, func(i int) error {
		err := pods.Delete(ctx, fmt.Sprintf("churn-%d", i), metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	deleted := time.Since(start)
	took = ch.changeAndMeasure(t, p)
	t.Logf("%d pods deleted in %s; then a change reconciled in %s", n, describe(deleted), describe(took))
	assert.Less(t, took, recoveryBound, "kept up with %d deletes", n)

	// The Go runtime collects at least every two minutes: the heap goes
	// back to within 64 MiB of where it was.
	const slack = 64 << 20
	var heapAfter float64
	took, ok := waitFor(ctx, 3*time.Minute, func() bool {
		heapAfter = metric(p.scrape(), "go_memstats_heap_inuse_bytes")
		return heapAfter < heapBefore+slack
	})
	t.Logf("heap in use: %.0f MiB before, %.0f MiB with %d pods, %.0f MiB after (%s)", heapBefore/(1<<20), heapPeak/(1<<20), n, heapAfter/(1<<20), describe(took))
	assert.True(t, ok, "the heap did not come back: %.0f MiB before, %.0f MiB after", heapBefore/(1<<20), heapAfter/(1<<20))
	code, body := p.readyz()
	assert.Equal(t, 200, code, body)
	assert.Equal(t, 0.0, metric(p.scrape(), "karta_gang_output_queue_depth"))
}

// churnPod is a bare pod (no owner: no workload), never scheduled here.
func churnPod(name string) *corev1.Pod {
	no := false
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"chaos": "churn"}},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: &no,
			Containers:                   []corev1.Container{{Name: "c", Image: "registry.example.com/idle:1"}},
		},
	}
}

// leaderKilled starts a standby, SIGKILLs the leader (its lease is not
// released) and measures how long a Karta change takes to be written by
// the new leader: the lease's 15 s plus the recovery bound at most.
func (ch *chaos) leaderKilled(t *testing.T, bin string) {
	standby := startController(t, bin, ch.c, "chaos-b")
	ch.waitReady(standby, "ok: standby", 2*time.Minute)
	ch.ctrl.kill()
	killed := time.Now()
	ch.changeAndMeasure(t, standby)
	took := time.Since(killed)
	t.Logf("leader killed: the standby took over and reconciled the change %s after the kill", describe(took))
	assert.Less(t, took, 15*time.Second+recoveryBound)
	ch.waitReady(standby, "ok: leader", recoveryBound)
	ch.ctrl = standby
}

// changeAndMeasure bumps the Karta's spec and creates a TrainJob (retrying
// while the server is not back), and returns how long, from the first
// attempt, until the leader wrote the Karta's new generation and the
// TrainJob's PodGroup exists.
func (ch *chaos) changeAndMeasure(t *testing.T, p *controllerProc) time.Duration {
	t.Helper()
	ctx := t.Context()
	start := time.Now()
	gen := ch.bumpKarta(ctx)
	name := fmt.Sprintf("chaos-%d", ch.workloads.Add(1))
	var uid string
	_, ok := waitFor(ctx, time.Minute, func() bool {
		js, err := ch.dyn.Resource(trainJobGVR).Namespace(metav1.NamespaceDefault).Create(ctx, ch.trainJob(name), metav1.CreateOptions{})
		if err == nil {
			uid = string(js.GetUID())
		}
		return err == nil
	})
	require.True(t, ok, "creating TrainJob %s", name)
	karta, group := false, false
	_, ok = waitFor(ctx, time.Minute, func() bool {
		karta = karta || ch.observed(ctx) >= gen
		group = group || ch.podGroupOf(ctx, uid)
		return karta && group
	})
	require.True(t, ok, "not reconciled within a minute (Karta generation %d: %t, PodGroup of %s: %t); log:\n%s", gen, karta, name, group, p.log.String())
	return time.Since(start)
}

// installTrainJobCRD installs the tutorial's TrainJob CRD and waits until
// it is served.
func (ch *chaos) installTrainJobCRD() {
	crd := testobj.Read(ch.t, repoRoot+"/examples/tutorial-trainjob/crd.yaml")
	_, err := ch.dyn.Resource(crdGVR).Create(ch.t.Context(), crd, metav1.CreateOptions{})
	require.NoError(ch.t, err)
	_, ok := waitFor(ch.t.Context(), time.Minute, func() bool {
		_, err := ch.dyn.Resource(trainJobGVR).Namespace(metav1.NamespaceDefault).List(ch.t.Context(), metav1.ListOptions{})
		return err == nil
	})
	require.True(ch.t, ok, "trainjobs.example.com not served")
}

// createKarta creates the Karta the faults change: the TrainJob example.
func (ch *chaos) createKarta() {
	k := testobj.Read(ch.t, repoRoot+"/examples/kartas/trainjob.yaml")
	k.SetName(ch.karta)
	_, err := ch.dyn.Resource(controller.KartaResource).Create(ch.t.Context(), k, metav1.CreateOptions{})
	require.NoError(ch.t, err)
}

// bumpKarta changes the Karta's spec (a luaScript comment), retrying until
// the server takes it, and returns the new generation.
func (ch *chaos) bumpKarta(ctx context.Context) int64 {
	var gen int64
	_, ok := waitFor(ctx, time.Minute, func() bool {
		kartas := ch.dyn.Resource(controller.KartaResource)
		k, err := kartas.Get(ctx, ch.karta, metav1.GetOptions{})
		if err != nil {
			return false
		}
		if err := unstructured.SetNestedField(k.Object, fmt.Sprintf("-- %d\n", time.Now().UnixNano()), "spec", "luaScript"); err != nil {
			return false
		}
		k, err = kartas.Update(ctx, k, metav1.UpdateOptions{})
		if err != nil {
			return false
		}
		gen = k.GetGeneration()
		return true
	})
	require.True(ch.t, ok, "updating the Karta")
	return gen
}

// observed is the Karta's Compiled condition's observedGeneration, 0 when
// it has none (or cannot be read).
func (ch *chaos) observed(ctx context.Context) int64 {
	k, err := ch.dyn.Resource(controller.KartaResource).Get(ctx, ch.karta, metav1.GetOptions{})
	if err != nil {
		return 0
	}
	conds, _, _ := unstructured.NestedSlice(k.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == controller.ConditionCompiled && m["status"] == "True" {
			g, _ := m["observedGeneration"].(int64)
			return g
		}
	}
	return 0
}

// podGroupOf reports whether a Volcano PodGroup owned by uid exists.
func (ch *chaos) podGroupOf(ctx context.Context, uid string) bool {
	list, err := ch.dyn.Resource(volcanoGroupGVR).Namespace(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false
	}
	for _, pg := range list.Items {
		for _, ref := range pg.GetOwnerReferences() {
			if string(ref.UID) == uid {
				return true
			}
		}
	}
	return false
}

// waitReady waits until p's /readyz answers 200 with a body that starts
// with prefix.
func (ch *chaos) waitReady(p *controllerProc, prefix string, d time.Duration) {
	ch.t.Helper()
	var code int
	var body string
	took, ok := waitFor(ch.t.Context(), d, func() bool {
		code, body = p.readyz()
		return code == 200 && strings.HasPrefix(body, prefix)
	})
	require.True(ch.t, ok, "%s /readyz after %s: %d %s; log:\n%s", p.name, describe(took), code, body, p.log.String())
}

// trainJob is the tutorial's running TrainJob (a launcher and four
// workers: one PodGroup, written before any pod) named name in default.
func (ch *chaos) trainJob(name string) *unstructured.Unstructured {
	tj := testobj.Read(ch.t, repoRoot+"/examples/tutorial-trainjob/running.yaml")
	tj.SetName(name)
	tj.SetNamespace(metav1.NamespaceDefault)
	tj.SetUID("")
	tj.SetResourceVersion("")
	unstructured.RemoveNestedField(tj.Object, "status")
	return tj
}

// parallel runs f(0..n-1) on 16 goroutines and fails the test on the first
// error.
func parallel(t *testing.T, n int, f func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	var next atomic.Int32
	var mu sync.Mutex
	var firstErr error
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
}

// watchLines are the lines of a controller log about watches, which say
// why readiness answered as it did.
func watchLines(log string) string {
	var b strings.Builder
	for line := range strings.Lines(log) {
		if strings.Contains(line, "watch") {
			b.WriteString(line)
		}
	}
	return b.String()
}
