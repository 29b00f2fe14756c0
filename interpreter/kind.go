package interpreter

import (
	"context"

	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// KindMismatchError is an object that is not of the kind its Program
// describes: its apiVersion and kind are not the Karta's root kind. The
// hooks refuse such an object unless the Program was compiled with
// Options.AllowKindMismatch, since a Karta's paths on another kind's object
// quietly find nothing (a Volcano Job read as a PyTorchJob is Undefined).
type KindMismatchError struct {
	// Karta is the Karta's name.
	Karta string
	// Hook is the hook that refused the object, "" for CheckKind.
	Hook Hook
	// Want is the Karta's root kind.
	Want schema.GroupVersionKind
	// Got is the object's apiVersion and kind (empty when it has none).
	Got schema.GroupVersionKind
}

func (e *KindMismatchError) Error() string {
	got := "has no apiVersion and kind"
	if e.Got != (schema.GroupVersionKind{}) {
		got = "is " + describeGVK(e.Got)
	}
	prefix := fmt.Sprintf("karta %q: ", e.Karta)
	if e.Hook != "" {
		prefix += string(e.Hook) + ": "
	}
	return fmt.Sprintf("%sthe object %s; this Karta describes %s", prefix, got, describeGVK(e.Want))
}

// describeGVK renders a kind as apiVersion and kind, as a manifest says it:
// "kubeflow.org/v1 PyTorchJob".
func describeGVK(gvk schema.GroupVersionKind) string {
	return gvk.GroupVersion().String() + " " + gvk.Kind
}

// CheckKind returns a *KindMismatchError when obj's apiVersion and kind are
// not the Karta's root kind, and nil when they are or when the Program was
// compiled with Options.AllowKindMismatch. Every hook that takes the
// workload object checks it first; callers may call it to refuse an object
// before doing anything else with it.
func (p *Program) CheckKind(obj *unstructured.Unstructured) error {
	return p.checkKind("", obj)
}

// enter starts a hook call on obj: the kind check, then the Karta's
// references resolved and bound to the returned context.
func (p *Program) enter(ctx context.Context, h Hook, obj *unstructured.Unstructured) (context.Context, error) {
	if err := p.checkKind(h, obj); err != nil {
		return ctx, err
	}
	if obj == nil {
		return ctx, nil
	}
	return p.bindReferences(ctx, h, obj)
}

func (p *Program) checkKind(h Hook, obj *unstructured.Unstructured) error {
	if p.allowKindMismatch || obj == nil {
		return nil
	}
	apiVersion, _ := obj.Object["apiVersion"].(string)
	kind, _ := obj.Object["kind"].(string)
	if kind == p.gvk.Kind && apiVersion == p.apiVersion {
		return nil
	}
	got := schema.FromAPIVersionAndKind(apiVersion, kind)
	if apiVersion == "" && kind == "" {
		got = schema.GroupVersionKind{}
	}
	return &KindMismatchError{Karta: p.name, Hook: h, Want: p.gvk, Got: got}
}
