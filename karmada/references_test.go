package karmada

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/luaapi"
)

// refsKarta is a Widget whose pod template, replicas and health are those
// of the Profile it names: Karmada's answers come from the Profile.
const refsKarta = `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: widget-profile}
spec:
  references:
  - name: profile
    kind: {group: example.com, version: v1, kind: Profile}
    lookup: {name: .spec.profile}
  structureDefinition:
    rootComponent:
      name: widget
      kind: {group: example.com, version: v1, kind: Widget}
      specDefinition:
        podTemplateSpecPath: '$profile.spec.template'
      scaleDefinition:
        replicasPath: '$profile.spec.replicas'
      statusDefinition:
        statusMappings:
          running:
          - byExpression: {expression: '$profile.status.ready', expectedResult: "true"}
`

const refsWidget = `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: ns}
spec: {profile: gpu}
`

const refsProfile = `
apiVersion: example.com/v1
kind: Profile
metadata: {name: gpu, namespace: ns}
spec:
  replicas: 4
  template:
    spec:
      containers:
      - name: main
        image: trainer:1
        resources: {requests: {nvidia.com/gpu: "2"}}
        envFrom: [{secretRef: {name: hf-token}}]
status: {ready: true}
`

// Karmada's operations resolve the Karta's references with the resolver
// the call's context carries, as the hooks do: no caller has to bind them
// first. Without the Profile they are absent, with a warning.
func TestForProgramBindsReferences(t *testing.T) {
	p := progFrom(t, refsKarta)
	k := ForProgram(p)
	widget := progObj(t, refsWidget)

	var warnings []string
	ctx := interpreter.WithResolver(context.Background(), interpreter.NewStaticResolver(progObj(t, refsProfile)),
		func(w interpreter.ReferenceWarning) { warnings = append(warnings, w.String()) })
	n, req, err := k.GetReplicas(ctx, widget)
	require.NoError(t, err)
	assert.Equal(t, int32(4), n)
	require.NotNil(t, req)
	qty(t, map[string]string{"nvidia.com/gpu": "2"}, req.ResourceRequest)
	comps, err := k.GetComponents(ctx, widget)
	require.NoError(t, err)
	require.Len(t, comps, 1)
	assert.Equal(t, int32(4), comps[0].Replicas)
	deps, err := k.GetDependencies(ctx, widget)
	require.NoError(t, err)
	assert.Equal(t, []DependentObjectReference{{APIVersion: "v1", Kind: "Secret", Namespace: "ns", Name: "hf-token"}}, deps)
	healthy, err := k.InterpretHealth(ctx, widget)
	require.NoError(t, err)
	assert.True(t, healthy)
	assert.Empty(t, warnings)

	ctx = interpreter.WithResolver(context.Background(), interpreter.NewStaticResolver(),
		func(w interpreter.ReferenceWarning) { warnings = append(warnings, w.String()) })
	comps, err = k.GetComponents(ctx, widget)
	require.NoError(t, err)
	assert.Empty(t, comps, "no pod template without the Profile")
	healthy, err = k.InterpretHealth(ctx, widget)
	require.NoError(t, err)
	assert.False(t, healthy)
	assert.Equal(t, []string{`karta "widget-profile": reference "profile": Profile ns/gpu not found: null`}, warnings[:1])
}

// The referenced objects count against the call's memory limit, as in a
// hook: past it the operation fails with a LimitError naming its hook.
func TestForProgramReferencedBytes(t *testing.T) {
	p := progCompile(t, progKarta(t, refsKarta), interpreter.Options{Limits: interpreter.Limits{MaxMemory: 4 << 10}})
	big := progObj(t, refsProfile)
	big.Object["data"] = strings.Repeat("x", 8<<10)
	ctx := interpreter.WithResolver(context.Background(), interpreter.NewStaticResolver(big), nil)
	_, err := ForProgram(p).GetComponents(ctx, progObj(t, refsWidget))
	var le *luaapi.LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, luaapi.KindReferencedBytes, le.Kind)
	assert.Equal(t, `karta "widget-profile": GetComponents: referenced bytes limit 4096 bytes exceeded`, err.Error())
}
