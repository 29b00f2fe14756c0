package gangoutput

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
)

// BenchmarkPodWebhook measures the admission latency the pod webhook adds
// to a pod's creation: the time to answer a review that links the pod
// (the owner chain from the caches, PlacePod, the link's patch) against
// the same handler answering the same review unchanged (decoding and
// encoding the review only). Each iteration times both, one after the
// other; the metrics are medians over the iterations: linked-ns and
// baseline-ns, and added-ns, the median of the differences (target: at
// most 1 ms). The cases are the webhook tests' linked ones, one per
// target, with the chains pod → PyTorchJob, pod → Job → JobSet, pod →
// TrainJob and worker pod → StatefulSet → leader pod → StatefulSet →
// LeaderWorkerSet.
//
//	go test ./gangoutput -run '^$' -bench PodWebhook -benchtime 2000x
func BenchmarkPodWebhook(b *testing.B) {
	for _, c := range webhookCases() {
		if c.result != resultLinked {
			continue
		}
		b.Run(c.name, func(b *testing.B) {
			e := webhookEnv(b, c.target, c.skip)
			body, err := os.ReadFile(filepath.Join("testdata", "webhook", c.name+".request.json"))
			require.NoError(b, err)
			linked := e.ctrl.Webhook()
			unchanged := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				e.ctrl.serveReview(w, r, func(context.Context, *admissionv1.AdmissionRequest) verdict { return verdict{result: resultIgnored} })
			})
			var review admissionv1.AdmissionReview
			require.NoError(b, json.Unmarshal(post(b, linked, body).Body.Bytes(), &review))
			require.NotNil(b, review.Response.Patch, "the case links its pod")

			base := make([]time.Duration, 0, b.N)
			real := make([]time.Duration, 0, b.N)
			added := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				post(b, unchanged, body)
				t1 := time.Now()
				post(b, linked, body)
				t2 := time.Now()
				base = append(base, t1.Sub(t0))
				real = append(real, t2.Sub(t1))
				added = append(added, t2.Sub(t1)-t1.Sub(t0))
			}
			b.StopTimer()
			b.ReportMetric(float64(median(real)), "linked-ns")
			b.ReportMetric(float64(median(base)), "baseline-ns")
			b.ReportMetric(float64(median(added)), "added-ns")
		})
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
