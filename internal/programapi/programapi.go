// Package programapi is the part of an interpreter.Program that karta's
// own adapters need beyond its public API: package karmada answers
// Karmada's operations for a Karta (in process, with a script's overrides
// in Karmada's calling convention) and exports a Karta as a Karmada
// customization, and both need the Program's pooled states and the shape
// of its component model. It lives under internal/ so that embedders
// cannot depend on it, and it imports no adapter, so the graph runs one
// way: adapters → interpreter → this package's types.
//
// Package interpreter sets Of when it is initialised; the adapters call
// it. (A function variable rather than an exported method keeps the
// Program's public API free of internal types.)
package programapi

import (
	"context"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/internal/jqexpr"
	"github.com/kartalua/karta/karta"
)

// Of returns the internals of an *interpreter.Program. It is set by
// package interpreter; p must be an *interpreter.Program.
var Of func(p any) Program

// Program is what an adapter may do with a Program's internals.
type Program interface {
	Name() string
	GVK() schema.GroupVersionKind
	Karta() *karta.Karta
	// Overridden reports whether a script (not an Argo CD health script)
	// defines the global function hook.
	Overridden(hook string) bool
	// ArgoHealth reports whether a script is an Argo CD health script.
	ArgoHealth() bool
	// WithState runs f on a pooled state as hook, under the Program's
	// limits (the deadline measured from here). A failure comes back as
	// the Program's hooks report theirs: a *luaapi.LimitError or an
	// *interpreter.HookError naming the Karta and the hook; an error f
	// returns that already is a HookError is kept as it is.
	WithState(ctx context.Context, hook string, f func(ctx context.Context, s State) error) error
	// ReviseReplica writes n through the replicasPath of the component
	// whose replicas the workload scales by (the root's, else the only
	// pod-bearing component's), leaving the rest of obj untouched.
	ReviseReplica(ctx context.Context, obj map[string]any, n int64) (map[string]any, error)
	// Model is the static shape of the component model, built once per
	// Program; callers must not change it.
	Model() *Model
	// Analysis is the checked form of one of the Karta's expressions.
	Analysis(expr string) (*jqexpr.Analysis, error)
	// Overrides are the Program's script chunks, in load order.
	Overrides() []Override
}

// State is a pooled state held by one WithState call.
type State interface {
	L() *lua.LState
	// Override loads the scripts into a fresh environment and returns
	// their global function hook, or nil.
	Override(ctx context.Context, hook string) (*lua.LFunction, error)
	// Units evaluates the present instances of the pod-bearing component
	// named component on obj, through this state's accessors. With scaled
	// each unit's Replicas is its own (1 when undefined) times those of
	// the component's scaled ancestors; without, Replicas is 0 and no
	// replicas path is evaluated, and when an instance's view fails the
	// units before it come back with the error.
	Units(ctx context.Context, obj map[string]any, component string, scaled bool) ([]Unit, error)
}

// Unit is one present instance of a pod-bearing component.
type Unit struct {
	// ID is the instance id ("" when the component has no instanceIdPath).
	ID       string
	Replicas int64
	// View is the instance's PodTemplateSpec view.
	View map[string]any
}

// Model is the static shape of a Program's component model.
type Model struct {
	// Components are in Karta order: the root, then the children.
	Components []*Component
	// ReplicaComponent is the component whose replicasPath ReviseReplica
	// writes, nil when ReviseReplica is not defined for the Karta.
	ReplicaComponent *Component
	// MaxReplicas is the largest replica count a revision may write.
	MaxReplicas int64
}

// Component is one component of the model.
type Component struct {
	Name   string
	Index  int
	Parent *Component
	// InstanceIDPath is "" without one.
	InstanceIDPath string
	// ReplicasPath is the scaleDefinition's replicasPath, "" without one.
	ReplicasPath string
	Style        karta.SpecStyle
	// Spec is the podTemplateSpecPath or podSpecPath, Metadata the
	// metadataPath; nil when not defined.
	Spec, Metadata *Path
	// Fragments are a fragmented definition's defined paths.
	Fragments []Fragment
	// Nodes are the places of the PodTemplateSpec view a fragmented
	// definition fills, in the order they are built.
	Nodes []ViewNode
}

// PodBearing reports whether the component defines pods.
func (c *Component) PodBearing() bool { return c.Style != karta.SpecStyleNone }

// Path is one path field of a component.
type Path struct {
	// Field names the Karta field, e.g. "podTemplateSpecPath".
	Field string
	Expr  string
}

// Fragment is one defined path of a fragmented pod spec definition.
type Fragment struct {
	// Key is the GetPodSpecs key, e.g. "labels".
	Key string
	Path
}

// ViewNode is one place of a fragmented PodTemplateSpec view.
type ViewNode struct {
	// At is the node's view path, e.g. ["metadata", "labels"].
	At []string
	// Key is the fragment the node holds ("" for the containers node).
	Key string
	// Containers marks spec.containers: [main] ++ containersPath.
	Containers bool
}

// Override is one script chunk of a Program.
type Override struct {
	Chunk, Source string
	// Globals are the global names the chunk defines at its top level.
	Globals []string
	// Argo marks an Argo CD health script.
	Argo bool
}
