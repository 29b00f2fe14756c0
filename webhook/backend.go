package webhook

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/karmada"
)

// Backend interprets the operations of some kinds. The methods after
// Handles have the signatures of *karmada.Interpreter's and are only
// called for a kind and operation Handles accepts. A Backend must be safe
// for concurrent use.
type Backend interface {
	// Handles reports whether the backend interprets op for objects of
	// gvk.
	Handles(gvk schema.GroupVersionKind, op karmada.Operation) bool

	GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *karmada.ReplicaRequirements, error)
	GetComponents(ctx context.Context, obj *unstructured.Unstructured) ([]karmada.Component, error)
	ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, error)
	Retain(ctx context.Context, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error)
	AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []karmada.AggregatedStatusItem) (*unstructured.Unstructured, error)
	ReflectStatusRaw(ctx context.Context, obj *unstructured.Unstructured) ([]byte, error)
	InterpretHealth(ctx context.Context, obj *unstructured.Unstructured) (bool, error)
	GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]karmada.DependentObjectReference, error)
}

// PoolStats is the state of a backend's pool of interpreters.
type PoolStats struct {
	Size  int // the most interpreters alive at once
	InUse int // interpreters running a call now
}

// StatsBackend is a Backend that reports its pool; the handler exports
// the figures as gauges. It is optional: *karmada.Interpreter does not
// expose its pool.
type StatsBackend interface {
	Backend
	PoolStats() PoolStats
}

// Karmada serves Karmada customizations: a *karmada.Interpreter whose
// HookEnabled is Handles.
type Karmada struct {
	*karmada.Interpreter
}

// NewKarmada wraps in as a Backend.
func NewKarmada(in *karmada.Interpreter) Karmada { return Karmada{Interpreter: in} }

// Handles is HookEnabled.
func (k Karmada) Handles(gvk schema.GroupVersionKind, op karmada.Operation) bool {
	return k.HookEnabled(gvk, op)
}

var _ Backend = Karmada{}
