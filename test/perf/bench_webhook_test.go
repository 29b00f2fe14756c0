package perf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/webhook"
)

// webhookKinds are the built-ins whose Kartas define InterpretReplica
// (one pod-bearing component of one instance) besides InterpretHealth:
// the operations Karmada asks a webhook for on every propagation.
var webhookKinds = []string{"nimservice", "knative-service", "jaxjob"}

// webhookClients is the number of concurrent clients, as Karmada's
// controllers call the webhook from many workers.
const webhookClients = 32

// vmBackend is baseline (c) behind the same webhook handler: Karmada's
// luavm method (KarmadaVM) running each built-in's Karmada export.
type vmBackend struct {
	vm    *KarmadaVM
	kinds map[schema.GroupVersionKind]bool
}

var _ webhook.Backend = vmBackend{}

var errBaseline = errors.New("not in the webhook baseline")

func (b vmBackend) Handles(gvk schema.GroupVersionKind, op karmada.Operation) bool {
	return b.kinds[gvk] && (op == karmada.OpInterpretReplica || op == karmada.OpInterpretHealth)
}

func (b vmBackend) GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *karmada.ReplicaRequirements, error) {
	res, err := b.vm.Run(ctx, karmada.OpInterpretReplica, &karmada.TestCase{DesiredObj: obj})
	if err != nil {
		return 0, nil, err
	}
	req, _ := res[1].Value.(*karmada.ReplicaRequirements)
	return res[0].Value.(int32), req, nil
}

func (b vmBackend) InterpretHealth(ctx context.Context, obj *unstructured.Unstructured) (bool, error) {
	res, err := b.vm.Run(ctx, karmada.OpInterpretHealth, &karmada.TestCase{ObservedObj: obj})
	if err != nil {
		return false, err
	}
	return res[0].Value.(bool), nil
}

func (vmBackend) GetComponents(context.Context, *unstructured.Unstructured) ([]karmada.Component, error) {
	return nil, errBaseline
}

func (vmBackend) ReviseReplica(context.Context, *unstructured.Unstructured, int64) (*unstructured.Unstructured, error) {
	return nil, errBaseline
}

func (vmBackend) Retain(context.Context, *unstructured.Unstructured, *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return nil, errBaseline
}

func (vmBackend) AggregateStatus(context.Context, *unstructured.Unstructured, []karmada.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	return nil, errBaseline
}

func (vmBackend) ReflectStatusRaw(context.Context, *unstructured.Unstructured) ([]byte, error) {
	return nil, errBaseline
}

func (vmBackend) GetDependencies(context.Context, *unstructured.Unstructured) ([]karmada.DependentObjectReference, error) {
	return nil, errBaseline
}

// webhookRequests are the request bodies: InterpretReplica and
// InterpretHealth of each kind's running example.
func webhookRequests(tb testing.TB, ws []*benchWorkload) [][]byte {
	tb.Helper()
	var out [][]byte
	for _, w := range ws {
		for _, op := range []karmada.Operation{karmada.OpInterpretReplica, karmada.OpInterpretHealth} {
			raw, err := json.Marshal(w.Running.Object)
			if err != nil {
				tb.Fatal(err)
			}
			gvk := w.Running.GroupVersionKind()
			body, err := json.Marshal(webhook.ResourceInterpreterContext{
				TypeMeta: metav1.TypeMeta{APIVersion: "config.karmada.io/v1alpha1", Kind: "ResourceInterpreterContext"},
				Request: &webhook.ResourceInterpreterRequest{UID: "bench", Kind: metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
					Name: w.Running.GetName(), Namespace: w.Running.GetNamespace(), Operation: op, Object: runtime.RawExtension{Raw: raw}},
			})
			if err != nil {
				tb.Fatal(err)
			}
			out = append(out, body)
		}
	}
	return out
}

// post sends one request and returns the response's body.
func post(client *http.Client, url string, body []byte) ([]byte, error) {
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, data)
	}
	return data, nil
}

// answer is a response's verdict without its uid: what must be equal
// between karta and the baseline.
func answer(tb testing.TB, data []byte) string {
	tb.Helper()
	var rc webhook.ResourceInterpreterContext
	if err := json.Unmarshal(data, &rc); err != nil || rc.Response == nil {
		tb.Fatalf("bad response %s: %v", data, err)
	}
	r := rc.Response
	if !r.Successful {
		tb.Fatalf("unsuccessful response: %s", data)
	}
	return canonical(tb, map[string]any{"replicas": r.Replicas, "requirements": r.ReplicaRequirements, "healthy": r.Healthy})
}

// BenchmarkWebhook measures the webhook under load: webhookClients
// concurrent clients over loopback HTTP, each sending InterpretReplica and
// InterpretHealth requests for the built-ins of webhookKinds in turn, to
// the same handler with karta's backend (karta) and with baseline (c)
// (karmada: Karmada's luavm method on each Karta's export). Both answer
// every request alike (asserted first). It reports requests per second
// and the p50 and p99 latency of one request.
func BenchmarkWebhook(b *testing.B) {
	var ws []*benchWorkload
	for _, name := range webhookKinds {
		ws = append(ws, workload(b, name))
	}
	reg := interpreter.NewRegistry()
	vm := vmBackend{kinds: map[schema.GroupVersionKind]bool{}}
	var custs []*karmada.Customization
	for _, w := range ws {
		reg.Put(w.prog)
		data, err := karmada.Export(w.prog)
		if err != nil {
			b.Fatal(err)
		}
		cs, err := karmada.Load(data, w.Name)
		if err != nil {
			b.Fatal(err)
		}
		custs = append(custs, cs...)
		vm.kinds[w.Running.GroupVersionKind()] = true
	}
	vm.vm = NewKarmadaVM(custs)
	defer vm.vm.Close()
	bodies := webhookRequests(b, ws)

	servers := map[string]*httptest.Server{
		"karta":   httptest.NewServer(webhook.New(webhook.Options{}, webhook.Kartas{Registry: reg})),
		"karmada": httptest.NewServer(webhook.New(webhook.Options{}, vm)),
	}
	for _, s := range servers {
		defer s.Close()
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: webhookClients}}
	for _, body := range bodies {
		var got []string
		for _, name := range []string{"karta", "karmada"} {
			data, err := post(client, servers[name].URL+webhook.InterpretPath, body)
			if err != nil {
				b.Fatalf("%s: %v", name, err)
			}
			got = append(got, answer(b, data))
		}
		if got[0] != got[1] {
			b.Fatalf("karta answers %s, the baseline %s", got[0], got[1])
		}
	}

	for _, name := range []string{"karta", "karmada"} {
		url := servers[name].URL + webhook.InterpretPath
		b.Run(name, func(b *testing.B) {
			benchClients(b, webhookClients, "req/s", func(c, i int) error {
				_, err := post(client, url, bodies[(c+i)%len(bodies)])
				return err
			})
		})
	}
}
