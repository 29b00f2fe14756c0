package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kartalua/karta/interpreter"
)

// DefaultReviseAttempts is how many times Revise reads, revises and
// patches before it gives up on an object that keeps changing.
const DefaultReviseAttempts = 5

// FieldManager names karta's writes in managedFields.
const FieldManager = "karta"

// ReviseOptions configure Revise.
type ReviseOptions struct {
	// DryRun has the server check and compute the patch without storing
	// it (dryRun=All).
	DryRun bool
	// Attempts bounds the read-revise-patch rounds (default
	// DefaultReviseAttempts).
	Attempts int
	// BeforePatch, when set, runs in each round after the object is read
	// and revised and before the patch is sent. An error stops Revise.
	// It is a seam for tests: a concurrent writer changes the object here.
	BeforePatch func(ctx context.Context, attempt int) error
}

// LiveRevision is the outcome of Revise.
type LiveRevision struct {
	// Object is the object as the server returned it after the patch
	// (what it would be, with DryRun), or as read when there was nothing
	// to change.
	Object *unstructured.Unstructured
	// Patch is the RFC 6902 patch sent: a test of metadata.resourceVersion,
	// then the revision's operations. It is empty when the revisions
	// change nothing; then nothing is sent.
	Patch []interpreter.PatchOp
	// Attempts is the number of rounds it took.
	Attempts int
	// Warnings are ReviseSpec's, of the round that patched (or found
	// nothing to change).
	Warnings []interpreter.ReviseWarning
}

// ConflictError is an object that changed between read and patch in every
// round.
type ConflictError struct {
	Attempts int
	Err      error
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("the object changed between read and patch %d times in a row; giving up (last: %v)", e.Attempts, e.Err)
}

func (e *ConflictError) Unwrap() error { return e.Err }

// Revise applies revisions (ReviseSpec of p) to a live object: it reads
// the object, revises it, and sends the revision's JSON Patch guarded by a
// test of the resourceVersion it read. When the object changed in between,
// the test fails (or the server reports a conflict), and Revise starts
// over from a fresh read, so that the revision is computed on what it
// changes: a concurrent writer's change is never lost, and never
// overwritten by one computed on an older object. The API server reports
// a failed test like any patch that does not apply (422, no details), so
// a 422 counts as a conflict only when the fresh read shows a new
// resourceVersion; otherwise it is returned. Revise gives up with a
// *ConflictError after opts.Attempts rounds. An error of ReviseSpec (an
// unknown component, an unreachable field) is returned as it is.
func (c *Client) Revise(ctx context.Context, k *Kind, p *interpreter.Program, namespace, name string, revisions []interpreter.Revision, opts ReviseOptions) (*LiveRevision, error) {
	attempts := opts.Attempts
	if attempts <= 0 {
		attempts = DefaultReviseAttempts
	}
	r := c.resourceFor(k.Mapping, namespace)
	gr := k.Mapping.Resource.GroupResource()
	// last is the failure of the previous round's patch, and tested the
	// resourceVersion it was guarded by.
	var last error
	var tested string
	for attempt := 1; attempt <= attempts; attempt++ {
		obj, err := r.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, &NotFoundError{Kind: k, Namespace: namespace, Name: name}
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s %s: %w", gr, name, c.reach(err))
		}
		if last != nil && obj.GetResourceVersion() == tested {
			// The object did not change: the patch failed for a reason
			// of its own, which a retry would meet again.
			return nil, fmt.Errorf("patching %s %s: %w", gr, name, last)
		}
		revised, err := p.ReviseSpec(ctx, obj, revisions)
		if err != nil {
			return nil, err
		}
		if len(revised.Patch) == 0 {
			return &LiveRevision{Object: obj, Patch: []interpreter.PatchOp{}, Attempts: attempt, Warnings: revised.Warnings}, nil
		}
		patch := append([]interpreter.PatchOp{{Op: "test", Path: "/metadata/resourceVersion", Value: obj.GetResourceVersion()}}, revised.Patch...)
		data, err := json.Marshal(patch)
		if err != nil {
			return nil, fmt.Errorf("encoding the patch: %w", err)
		}
		if opts.BeforePatch != nil {
			if err := opts.BeforePatch(ctx, attempt); err != nil {
				return nil, err
			}
		}
		po := metav1.PatchOptions{FieldManager: FieldManager}
		if opts.DryRun {
			po.DryRun = []string{metav1.DryRunAll}
		}
		out, err := r.Patch(ctx, name, types.JSONPatchType, data, po)
		if err == nil {
			return &LiveRevision{Object: out, Patch: patch, Attempts: attempt, Warnings: revised.Warnings}, nil
		}
		if !maybeConflict(err) {
			return nil, fmt.Errorf("patching %s %s: %w", gr, name, c.reach(err))
		}
		last, tested = err, obj.GetResourceVersion()
	}
	return nil, &ConflictError{Attempts: attempts, Err: last}
}

// maybeConflict reports a patch that may have lost a race, to be told
// apart by reading the object again: a conflict (409), or the API
// server's answer to a JSON Patch that does not apply, 422 with a generic
// message, which is also its answer to a failed test operation; and
// json-patch's own message, which fakes return as is.
func maybeConflict(err error) bool {
	if apierrors.IsConflict(err) {
		return true
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		st := status.Status()
		return st.Code == http.StatusUnprocessableEntity && (st.Details == nil || len(st.Details.Causes) == 0)
	}
	return strings.Contains(err.Error(), "testing value /metadata/resourceVersion failed")
}
