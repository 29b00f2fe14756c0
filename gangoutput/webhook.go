package gangoutput

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/podgroups"
)

// WebhookPath is the path the pod webhook is served at.
const WebhookPath = "/mutate-pods"

// maxReviewBytes bounds an admission review's body: a pod is at most
// about 1.5 MiB, and the review holds it once on CREATE.
const maxReviewBytes = 6 << 20

// placeTimeout bounds placing one pod, below the webhook's own timeout.
const placeTimeout = time.Second

// The results of a pod admission (karta_pod_webhook_admissions_total).
const (
	resultLinked        = "linked"
	resultAlreadyLinked = "already_linked"
	resultNoWorkload    = "no_workload"
	resultSkipped       = "skipped"
	resultUnmatched     = "unmatched"
	resultIgnored       = "ignored"
	resultFailOpen      = "fail_open"
)

var admissionResults = []string{resultLinked, resultAlreadyLinked, resultNoWorkload, resultSkipped, resultUnmatched, resultIgnored, resultFailOpen}

// The reasons of karta_pod_webhook_fail_open_total, besides the chain's.
const (
	reasonHookError  = "hook_error"
	reasonBadRequest = "bad_request"
)

var failOpenReasons = []string{reasonUnknownWorkload, reasonLookupFailed, reasonHookError, reasonBadRequest}

// verdict is what the webhook decided for one pod.
type verdict struct {
	result string
	// reason is the fail-open reason, with result fail_open.
	reason string
	// patch is the JSON Patch of a linked pod.
	patch []byte
	// detail says why, for the log and the response's status message.
	detail string
}

// Webhook is the pod admission webhook: mount it at WebhookPath on an
// HTTPS server. It links each pod created for a workload the controller
// looks after to its group, from the controller's caches, and admits every
// other pod (and every pod it cannot link) unchanged.
func (c *Controller) Webhook() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { c.serveReview(w, r, c.admit) })
}

// serveReview answers one AdmissionReview with admit's verdict; a review
// it cannot read is answered 400 (the API server then applies the
// failurePolicy, Ignore).
func (c *Controller) serveReview(w http.ResponseWriter, r *http.Request, admit func(context.Context, *admissionv1.AdmissionRequest) verdict) {
	start := time.Now()
	defer func() { c.metrics.latency.Observe(time.Since(start).Seconds()) }()
	review, err := readReview(w, r)
	if err != nil {
		c.count(verdict{result: resultFailOpen, reason: reasonBadRequest})
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	v := admit(r.Context(), review.Request)
	c.count(v)
	if v.result == resultFailOpen {
		c.log.Warn("pod webhook: admitted unchanged", "reason", v.reason, "pod", podName(review.Request), "detail", v.detail)
	}
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	if v.patch != nil {
		pt := admissionv1.PatchTypeJSONPatch
		resp.Patch, resp.PatchType = v.patch, &pt
	}
	if v.detail != "" {
		resp.Result = &metav1.Status{Message: v.detail}
	}
	out, err := json.Marshal(&admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

func (c *Controller) count(v verdict) {
	c.metrics.admissions.WithLabelValues(v.result).Inc()
	if v.result == resultFailOpen {
		c.metrics.failOpen.WithLabelValues(v.reason).Inc()
	}
}

// readReview reads an admission.k8s.io/v1 AdmissionReview with a request.
func readReview(w http.ResponseWriter, r *http.Request) (*admissionv1.AdmissionReview, error) {
	if r.Method != http.MethodPost {
		return nil, fmt.Errorf("method %s: POST an AdmissionReview", r.Method)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxReviewBytes))
	if err != nil {
		return nil, fmt.Errorf("reading the review: %w", err)
	}
	review := &admissionv1.AdmissionReview{}
	if err := json.Unmarshal(body, review); err != nil {
		return nil, fmt.Errorf("decoding the review: %w", err)
	}
	if gvk := review.GroupVersionKind(); gvk != admissionv1.SchemeGroupVersion.WithKind("AdmissionReview") {
		return nil, fmt.Errorf("apiVersion %q, kind %q: want %s AdmissionReview", review.APIVersion, review.Kind, admissionv1.SchemeGroupVersion)
	}
	if review.Request == nil {
		return nil, errors.New("the review has no request")
	}
	return review, nil
}

func podName(req *admissionv1.AdmissionRequest) string {
	if req.Name != "" {
		return req.Namespace + "/" + req.Name
	}
	return req.Namespace + "/(generated)"
}

// admit decides for one request.
func (c *Controller) admit(ctx context.Context, req *admissionv1.AdmissionRequest) verdict {
	if req.Operation != admissionv1.Create || req.Resource.Group != "" || req.Resource.Resource != "pods" || req.SubResource != "" {
		return verdict{result: resultIgnored}
	}
	pod := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(req.Object.Raw, &pod.Object); err != nil || pod.Object == nil {
		return verdict{result: resultFailOpen, reason: reasonBadRequest, detail: fmt.Sprintf("decoding the pod: %v", err)}
	}
	if pod.GetNamespace() == "" {
		pod.SetNamespace(req.Namespace)
	}
	if controllerOf(pod.GetOwnerReferences()) == nil {
		return verdict{result: resultNoWorkload}
	}
	ctx, cancel := context.WithTimeout(ctx, placeTimeout)
	defer cancel()
	h, err := c.rootOf(ctx, pod.GetNamespace(), pod.GetOwnerReferences(), true)
	var ce *chainError
	if errors.As(err, &ce) {
		return verdict{result: resultFailOpen, reason: ce.reason, detail: "karta: " + err.Error()}
	}
	if h == nil {
		return verdict{result: resultNoWorkload}
	}
	if !c.selector.Empty() && !c.selector.Matches(labels.Set(h.obj.GetLabels())) {
		return verdict{result: resultSkipped}
	}
	if on, _ := c.enabled(h.p, h.obj); !on {
		return verdict{result: resultSkipped}
	}
	if _, linked := podgroups.LinkOf(c.opts.Target, pod); linked {
		return verdict{result: resultAlreadyLinked}
	}
	hookCtx, logReferences := c.withReferences(ctx, h.key.String())
	link, err := c.link(hookCtx, h, pod)
	logReferences()
	var unmatched *interpreter.UnmatchedError
	if errors.As(err, &unmatched) {
		return verdict{result: resultUnmatched, detail: "karta: " + unmatched.Reason}
	}
	if err != nil {
		return verdict{result: resultFailOpen, reason: reasonHookError, detail: "karta: " + err.Error()}
	}
	if len(link.Patch) == 0 {
		return verdict{result: resultAlreadyLinked}
	}
	patch, err := json.Marshal(link.Patch)
	if err != nil {
		return verdict{result: resultFailOpen, reason: reasonHookError, detail: "karta: " + err.Error()}
	}
	return verdict{result: resultLinked, patch: patch}
}

// link is pod's link: from PlacePod, or, when the link names the pod's
// subgroup (podgroups.NeedsGroups), from GetGangGroups called with the
// pod, which says which subgroup it is in.
func (c *Controller) link(ctx context.Context, h *hit, pod *unstructured.Unstructured) (*podgroups.PodLink, error) {
	hooks := c.opts.Hooks(h.p)
	if podgroups.NeedsGroups(h.p.Karta(), c.opts.Target, c.opts.Build) {
		gangs, err := hooks.GetGangGroups(ctx, h.obj, []*unstructured.Unstructured{pod})
		if err != nil {
			return nil, err
		}
		return podgroups.LinkInGroups(c.opts.Target, c.opts.Build, pod, gangs)
	}
	pl, err := hooks.PlacePod(ctx, h.obj, pod)
	if err != nil {
		return nil, err
	}
	return podgroups.LinkPod(h.p.Karta(), c.opts.Target, pod, pl)
}
