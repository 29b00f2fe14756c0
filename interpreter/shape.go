package interpreter

import (
	"github.com/kartalua/karta/karta"
)

// The shape of a Program's component model, for adapters that carry a
// Karta into another runtime's convention (package karmada answers
// Karmada's operations in process and exports a Karta as a Karmada
// customization; internal/luaexport writes the exports' Lua): what the
// Karta's components are, where their paths are, how a fragmented
// definition builds its PodTemplateSpec view. Program.Shape returns it,
// built once; Program.WithState runs an adapter's own algorithm on a
// pooled state (adapter.go).

// Shape is the static shape of a Program's component model.
type Shape struct {
	// Components are in Karta order: the root, then the children.
	Components []*ComponentShape
	// ReplicaComponent is the component whose replicasPath ReviseReplica
	// writes, nil when ReviseReplica is not defined for the Karta.
	ReplicaComponent *ComponentShape
	// MaxReplicas is the largest replica count a revision may write.
	MaxReplicas int64
}

// ComponentShape is one component of the model.
type ComponentShape struct {
	Name   string
	Index  int
	Parent *ComponentShape
	// InstanceIDPath is "" without one.
	InstanceIDPath string
	// IDsFromReferences: the instanceIdPath reads references and nothing
	// of the object (the built-in trainjob's job, whose instances are its
	// runtime's replicated jobs). Such a component with no id has nothing
	// else of it read, in process and in every export (an export, which
	// resolves no reference, decides from it whether the component has no
	// instance at all).
	IDsFromReferences bool
	// ReplicasPath is the scaleDefinition's replicasPath, "" without one.
	ReplicasPath string
	Style        karta.SpecStyle
	// Spec is the podTemplateSpecPath or podSpecPath, Metadata the
	// metadataPath; nil when not defined.
	Spec, Metadata *ShapePath
	// Fragments are a fragmented definition's defined paths.
	Fragments []ShapeFragment
	// Nodes are the places of the PodTemplateSpec view a fragmented
	// definition fills, in the order they are built.
	Nodes []ShapeNode
}

// PodBearing reports whether the component defines pods.
func (c *ComponentShape) PodBearing() bool { return c.Style != karta.SpecStyleNone }

// dependencyFragment reports whether the fragment with the given key can
// name an object a pod depends on (a ConfigMap, Secret, ServiceAccount or
// PersistentVolumeClaim, as Karmada's kube.getPodDependencies finds them):
// only containers do, through env and envFrom. Labels, resources, affinity,
// an image and the rest name none, so GetDependencies neither evaluates
// them nor fails where only they fail.
func dependencyFragment(key string) bool {
	switch key {
	case "container", "containers", "initContainers":
		return true
	}
	return false
}

// NamesDependencies reports whether the component's instances can name
// dependencies: it is pod-bearing and, when fragmented, defines a
// dependencyFragment. GetDependencies reads no other component.
func (c *ComponentShape) NamesDependencies() bool {
	if c.Style != karta.SpecStyleFragmented {
		return c.PodBearing()
	}
	for _, f := range c.Fragments {
		if dependencyFragment(f.Key) {
			return true
		}
	}
	return false
}

// DependencyShape is the component as GetDependencies reads it: a
// fragmented component with only its dependencyFragments and the view's
// nodes they fill; any other component as it is.
func (c *ComponentShape) DependencyShape() *ComponentShape {
	if c.Style != karta.SpecStyleFragmented {
		return c
	}
	d := *c
	d.Fragments, d.Nodes = nil, nil
	for _, f := range c.Fragments {
		if dependencyFragment(f.Key) {
			d.Fragments = append(d.Fragments, f)
		}
	}
	for _, n := range c.Nodes {
		if n.Containers || dependencyFragment(n.Key) {
			d.Nodes = append(d.Nodes, n)
		}
	}
	return &d
}

// ShapePath is one path field of a component.
type ShapePath struct {
	// Field names the Karta field, e.g. "podTemplateSpecPath".
	Field string
	Expr  string
}

// ShapeFragment is one defined path of a fragmented pod spec definition.
type ShapeFragment struct {
	// Key is the GetPodSpecs key, e.g. "labels".
	Key string
	ShapePath
}

// ShapeNode is one place of a fragmented PodTemplateSpec view.
type ShapeNode struct {
	// At is the node's view path, e.g. ["metadata", "labels"].
	At []string
	// Key is the fragment the node holds ("" for the containers node).
	Key string
	// Containers marks spec.containers: [main] ++ containersPath.
	Containers bool
}

// ScriptChunk is one script chunk of a Program (spec.luaScript, then
// Options.Scripts), as an export carries it.
type ScriptChunk struct {
	Chunk, Source string
	// Globals are the global names the chunk defines at its top level.
	Globals []string
	// Argo marks an Argo CD health script.
	Argo bool
}

// Unit is one present instance of a pod-bearing component
// (PooledState.Units).
type Unit struct {
	// ID is the instance id ("" when the component has no instanceIdPath).
	ID       string
	Replicas int64
	// View is the instance's PodTemplateSpec view.
	View map[string]any
}
