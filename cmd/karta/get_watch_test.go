package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/cluster/clustertest"
)

// syncBuffer is a buffer a watch writes to while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	// grew is signalled on every write.
	grew chan struct{}
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{grew: make(chan struct{}, 1)} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case b.grew <- struct{}{}:
	default:
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits until the buffer holds n lines. The deadline only keeps a
// broken watch from hanging the run.
func (b *syncBuffer) waitFor(t *testing.T, n int) string {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		if s := b.String(); strings.Count(s, "\n") >= n {
			return s
		}
		select {
		case <-b.grew:
		case <-deadline:
			t.Fatalf("waiting for %d lines, have:\n%s", n, b.String())
		}
	}
}

// get -w prints the table, then a row, in the same columns, for each
// change, until it is interrupted; -o json prints one object per line.
func TestGetWatch(t *testing.T) {
	for _, tc := range []struct {
		format string
		want   string
	}{
		{"table", "" +
			"NAME             KIND         STATUS    PODS                    GANGS   AGE\n" +
			"mistral-7b-sft   PyTorchJob   Running   master 1/1 worker 2/3   3/4     154d\n" +
			"mistral-7b-sft   PyTorchJob   Running   master 1/1 worker 3/3   4/4     154d\n"},
		{"json", "" +
			`{"namespace":"nlp","name":"mistral-7b-sft","apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","karta":"pytorchjob","status":"Running",` +
			`"components":[{"component":"master","instance":"","expected":1,"existing":1},{"component":"worker","instance":"","expected":3,"existing":2}],` +
			`"groups":[{"name":"pg-9b1e5c3a-24f7-4d8e-a6b0-53c2e7f91d04-job","minMember":4,"present":3}],"creationTimestamp":"2025-04-02T13:40:11Z"}` + "\n" +
			`{"namespace":"nlp","name":"mistral-7b-sft","apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","karta":"pytorchjob","status":"Running",` +
			`"components":[{"component":"master","instance":"","expected":1,"existing":1},{"component":"worker","instance":"","expected":3,"existing":3}],` +
			`"groups":[{"name":"pg-9b1e5c3a-24f7-4d8e-a6b0-53c2e7f91d04-job","minMember":4,"present":4}],"creationTimestamp":"2025-04-02T13:40:11Z"}` + "\n"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			var late *unstructured.Unstructured
			var objs []*unstructured.Unstructured
			for _, o := range clustertest.Examples(t, "../..", "pytorchjob") {
				if o.GetKind() == "Pod" && o.GetName() == "mistral-7b-sft-worker-2" {
					late = o
					continue
				}
				objs = append(objs, o)
			}
			dyn := useFakeCluster(t, nil, objs...)
			out, errOut := newSyncBuffer(), newSyncBuffer()
			s := streams{in: strings.NewReader(""), out: out, err: errOut}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				done <- runGet(ctx, s, &getOptions{output: tc.format, watch: true, kind: "pytorchjobs"})
			}()
			lines := 1
			if tc.format == "table" {
				lines = 2
			}
			out.waitFor(t, lines)
			_, err := dyn.Resource(cluster.PodResource).Namespace("nlp").Create(ctx, late, metav1.CreateOptions{})
			require.NoError(t, err)
			out.waitFor(t, lines+1)
			cancel()
			require.NoError(t, <-done, "an interrupted watch succeeds")
			assert.Equal(t, tc.want, out.String())
			assert.Empty(t, errOut.String())
		})
	}
}

// A watch's rows line up under the initial table; a wider cell widens its
// column from there on. After an empty list, the first row brings the
// header. YAML rows are documents.
func TestGetPrinterWatchRows(t *testing.T) {
	three := int64(3)
	one := 1
	row := func(name, status string) cluster.Workload {
		return cluster.Workload{Namespace: "nlp", Name: name, Kind: "PyTorchJob", Status: status,
			Components: []cluster.Component{{Component: "worker", Expected: &three, Existing: &one}},
			Groups:     []cluster.GangGroup{{Name: "g", MinMember: 2, Present: 1}}}
	}
	var buf bytes.Buffer
	p := &getPrinter{w: &buf, warn: func(string) {}, format: formatTable, allNamespaces: true, now: clusterNow}
	require.NoError(t, p.initial([]cluster.Workload{row("a", "Running")}))
	require.NoError(t, p.changed(row("a-much-longer-name", "Failed")))
	assert.Equal(t, ""+
		"NAMESPACE   NAME   KIND         STATUS    PODS         GANGS   AGE\n"+
		"nlp         a      PyTorchJob   Running   worker 1/3   1/2     <unknown>\n"+
		"nlp         a-much-longer-name   PyTorchJob   Failed    worker 1/3   1/2     <unknown>\n", buf.String())

	buf.Reset()
	p = &getPrinter{w: &buf, warn: func(string) {}, format: formatTable, now: clusterNow}
	require.NoError(t, p.initial(nil))
	assert.Empty(t, buf.String(), "no header for an empty list")
	w := row("b", "Running")
	w.Components[0].Expected, w.Components[0].Existing = nil, nil
	w.Groups = []cluster.GangGroup{}
	require.NoError(t, p.changed(w))
	assert.Equal(t, ""+
		"NAME   KIND         STATUS    PODS         GANGS   AGE\n"+
		"b      PyTorchJob   Running   worker ?/?   -       <unknown>\n", buf.String())

	buf.Reset()
	p = &getPrinter{w: &buf, warn: func(string) {}, format: formatYAML, now: clusterNow}
	require.NoError(t, p.initial([]cluster.Workload{row("a", "Running")}))
	require.NoError(t, p.changed(row("a", "Failed")))
	assert.Equal(t, 2, strings.Count(buf.String(), "name: a\n"))
	assert.Equal(t, 1, strings.Count(buf.String(), "---\n"))
}
