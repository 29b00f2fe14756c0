package karmada

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kartalua/karta/internal/stutter"
	"github.com/kartalua/karta/interpreter"
)

// Every operation that fails — on a Karta that does not define it, on an
// object of another kind, in a script, past a limit, inside a nested call
// (AggregateStatus runs InterpretStatus) — names the Karta and the hook
// once: errors are wrapped on their way out of nested calls, and each
// layer must not repeat what the one below said.
func TestErrorsSayEachThingOnce(t *testing.T) {
	ctx := context.Background()
	// Two pod-bearing components, no replicasPath on the root, no gang:
	// GetReplicas and ReviseReplica are not defined.
	train := progCompile(t, progKartaFile(t, "../examples/kartas/trainjob.yaml"), interpreter.Options{})
	trainObj := progObjFile(t, "../examples/tutorial-trainjob/running.yaml")[0]
	pytorch := builtinProg(t, "pytorchjob")
	pytorchObj := exampleObj(t, "pytorchjob", "running.yaml")
	// Every hook a script can override fails in the script.
	k := progKartaFile(t, "../builtin/kartas/pytorchjob.yaml")
	k.Spec.LuaScript = `
local function boom() error("boom") end
InterpretStatus, GetPodSpecs, GetReplicas, GetComponents, ReviseReplica = boom, boom, boom, boom, boom
ReflectStatus, InterpretHealth, GetDependencies, AggregateStatus, Retain = boom, boom, boom, boom, boom
`
	failing := progCompile(t, k, interpreter.Options{})
	// AggregateStatus reaches InterpretStatus's failure through a member's status.
	k = progKartaFile(t, "../builtin/kartas/pytorchjob.yaml")
	k.Spec.LuaScript = `function InterpretStatus(obj) error("no status for " .. obj.metadata.name) end`
	statusFails := progCompile(t, k, interpreter.Options{})
	// ReviseReplica is defined, through the root's replicasPath.
	set := progFrom(t, `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: set}
spec:
  structureDefinition:
    rootComponent:
      name: set
      kind: {group: example.com, version: v1, kind: Set}
      scaleDefinition: {replicasPath: .spec.replicas}
      specDefinition: {podTemplateSpecPath: .spec.template}
      statusDefinition:
        phaseDefinition: {path: .status.phase}
        statusMappings:
          running: [{byPhase: Running}]
`)
	setObj := progObj(t, "apiVersion: example.com/v1\nkind: Set\nmetadata: {name: s}\nspec: {replicas: 2, template: {spec: {containers: [{name: c, image: i}]}}}\n")
	items := []AggregatedStatusItem{{ClusterName: "member1", Applied: true, Status: &runtime.RawExtension{Raw: []byte(`{"conditions": []}`)}}}

	type call struct {
		name string
		run  func() error
	}
	ops := func(p *interpreter.Program, obj *unstructured.Unstructured) []call {
		kp := ForProgram(p)
		return []call{
			{"GetPodSpecs", func() error { _, err := p.GetPodSpecs(ctx, obj); return err }},
			{"InterpretStatus", func() error { _, err := p.InterpretStatus(ctx, obj); return err }},
			{"ReviseSpec", func() error {
				_, err := p.ReviseSpec(ctx, obj, []interpreter.Revision{{Component: "nope", Patch: map[string]any{}}})
				return err
			}},
			{"GetGangGroups", func() error { _, err := p.GetGangGroups(ctx, obj, nil); return err }},
			{"Suspend", func() error { _, err := p.Suspend(ctx, obj); return err }},
			{"Resume", func() error { _, err := p.Resume(ctx, obj); return err }},
			{"GetReplicas", func() error { _, _, err := kp.GetReplicas(ctx, obj); return err }},
			{"GetComponents", func() error { _, err := kp.GetComponents(ctx, obj); return err }},
			{"ReviseReplica", func() error { _, err := kp.ReviseReplica(ctx, obj, 3); return err }},
			{"ReviseReplica out of range", func() error { _, err := kp.ReviseReplica(ctx, obj, 1<<40); return err }},
			{"ReflectStatus", func() error { _, err := kp.ReflectStatus(ctx, obj); return err }},
			{"InterpretHealth", func() error { _, err := kp.InterpretHealth(ctx, obj); return err }},
			{"GetDependencies", func() error { _, err := kp.GetDependencies(ctx, obj); return err }},
			{"AggregateStatus", func() error { _, err := kp.AggregateStatus(ctx, obj, items); return err }},
			{"Retain", func() error { _, err := kp.Retain(ctx, obj, obj); return err }},
		}
	}
	failures := 0
	for _, tc := range []struct {
		name string
		p    *interpreter.Program
		obj  *unstructured.Unstructured
	}{
		{"undefined hooks", train, trainObj},
		{"kind mismatch", train, pytorchObj},
		{"script errors", failing, pytorchObj},
		{"nested InterpretStatus", statusFails, pytorchObj},
		{"builtin", pytorch, pytorchObj},
		{"replicas out of range", set, setObj},
	} {
		for _, c := range ops(tc.p, tc.obj) {
			err := c.run()
			if err == nil {
				continue
			}
			failures++
			assert.Empty(t, stutter.Find(err.Error()), "%s: %s says a name twice: %s", tc.name, c.name, err)
		}
	}
	require.Greater(t, failures, 40, "the calls fail as the cases intend")
}
