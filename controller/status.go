package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
)

// kartaStatus is the part of a Karta's status the controller owns.
type kartaStatus struct {
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
}

// readStatus reads an object's conditions and observedGeneration. A status
// that does not parse (someone wrote nonsense) reads as empty and is
// overwritten.
func readStatus(obj *unstructured.Unstructured) kartaStatus {
	var st kartaStatus
	raw, ok := obj.Object["status"].(map[string]any)
	if !ok {
		return st
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &st); err != nil {
		return kartaStatus{}
	}
	return st
}

// desiredStatus merges conds into the object's status and removes the
// conditions of the types in drop: a condition whose status is unchanged
// keeps its lastTransitionTime, conditions of other types (someone else's)
// are kept. changed is false when the object already says all of it.
func desiredStatus(obj *unstructured.Unstructured, conds []metav1.Condition, drop []string) (st kartaStatus, changed bool) {
	st = readStatus(obj)
	st.Conditions = append([]metav1.Condition(nil), st.Conditions...)
	for _, c := range conds {
		if meta.SetStatusCondition(&st.Conditions, c) {
			changed = true
		}
	}
	for _, typ := range drop {
		if meta.RemoveStatusCondition(&st.Conditions, typ) {
			changed = true
		}
	}
	if st.ObservedGeneration != obj.GetGeneration() {
		st.ObservedGeneration, changed = obj.GetGeneration(), true
	}
	return st, changed
}

// withStatus returns a copy of obj whose status holds st, keeping the
// status fields the controller does not own.
func withStatus(obj *unstructured.Unstructured, st kartaStatus) (*unstructured.Unstructured, error) {
	out := obj.DeepCopy()
	raw, _ := out.Object["status"].(map[string]any)
	if raw == nil {
		raw = map[string]any{}
	}
	conv, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&st)
	if err != nil {
		return nil, fmt.Errorf("encoding the status: %w", err)
	}
	raw["conditions"] = conv["conditions"]
	raw["observedGeneration"] = conv["observedGeneration"]
	out.Object["status"] = raw
	return out, nil
}

// writeStatus writes conds to obj's status subresource, and removes the
// conditions of the types in drop, unless the object already says so. On a conflict it rereads the object and tries again,
// unless the reread object is a newer generation or another object of the
// same name: its own event will bring it here. It reports whether it
// wrote, and whether the server kept what was written (a schema that
// prunes status.conditions does not).
func writeStatus(ctx context.Context, client dynamic.ResourceInterface, obj *unstructured.Unstructured, conds []metav1.Condition, drop []string) (wrote, kept bool, err error) {
	cur := obj
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if cur == nil {
			fresh, err := client.Get(ctx, obj.GetName(), metav1.GetOptions{})
			if err != nil {
				return err
			}
			if fresh.GetUID() != obj.GetUID() || fresh.GetGeneration() != obj.GetGeneration() {
				return nil
			}
			cur = fresh
		}
		st, changed := desiredStatus(cur, conds, drop)
		if !changed {
			return nil
		}
		next, err := withStatus(cur, st)
		if err != nil {
			return err
		}
		cur = nil // a retry rereads
		got, err := client.UpdateStatus(ctx, next, metav1.UpdateOptions{FieldManager: FieldManager})
		if err != nil {
			return err
		}
		wrote = true
		_, stillChanged := desiredStatus(got, conds, drop)
		kept = !stillChanged
		return nil
	})
	if apierrors.IsNotFound(err) {
		return wrote, kept, nil // deleted meanwhile: its delete event follows
	}
	if err != nil {
		return wrote, kept, fmt.Errorf("writing the status of %s: %w", obj.GetName(), err)
	}
	return wrote, kept, nil
}
