package schemacheck_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/karta/schemacheck"
)

func loadSchema(t *testing.T, file string, gvk schema.GroupVersionKind) *schemacheck.Schema {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	crds, err := schemacheck.DecodeCRDs(data, file)
	require.NoError(t, err)
	set, err := schemacheck.NewSet(crds...)
	require.NoError(t, err)
	s, err := set.Lookup(gvk)
	require.NoError(t, err)
	return s
}

var widget = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

// widgetKarta is a Karta for the Widget CRD with the paths under test set.
func widgetKarta(t *testing.T, component, status string) *karta.Checked {
	t.Helper()
	return widgetKartaWith(t, "", component, status)
}

// widgetKartaWith is widgetKarta with spec.references (YAML list items).
func widgetKartaWith(t *testing.T, references, component, status string) *karta.Checked {
	t.Helper()
	if references != "" {
		references = "  references:\n" + references
	}
	text := `apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: widget}
spec:
` + references + `  structureDefinition:
    rootComponent:
      name: widget
      kind: {group: example.com, version: v1, kind: Widget}
      statusDefinition:
` + status + `
    childComponents:
    - name: role
      ownerRef: widget
` + component
	if strings.Contains(component, "instanceIdPath") {
		text += "      podSelector: {componentInstanceSelector: {idPath: '.metadata.labels.role'}}\n"
	}
	ks, err := karta.Load([]byte(text), "widget.yaml")
	require.NoError(t, err)
	c, problems := karta.Analyze(ks[0], interpreter.ValidateOptions())
	require.Empty(t, problems.Errors(), "the Karta itself is valid")
	return c
}

const okStatus = `        statusMappings:
          running: [{byExpression: {expression: '.status.state == "Busy"', expectedResult: "true"}}]`

func TestCheckPaths(t *testing.T) {
	s := loadSchema(t, "testdata/widget-crd.yaml", widget)
	const comp = "spec.structureDefinition.childComponents[0]"
	cases := []struct {
		name      string
		component string
		status    string
		want      []string
	}{
		{"fitting paths", `
      instanceIdPath: .spec.roles[]?.name
      specDefinition: {podTemplateSpecPath: '.spec.roles[]? | .template'}
      scaleDefinition:
        replicasPath: .spec.roles[]? | (.replicas // 1) * 2
        minReplicasPath: .spec.roles[]?.index
`, okStatus, nil},
		{"a typo", `
      scaleDefinition: {replicasPath: '.spec.role[0].replicas'}
`, okStatus, []string{comp + `.scaleDefinition.replicasPath: spec has no field "role"; did you mean "roles"? ` +
			`(it has: child, extra, paused, pools, roles, scale, size) (schema: example.com/v1 Widget spec)`}},
		{"a field of an array", `
      scaleDefinition: {replicasPath: .spec.roles.replicas}
`, okStatus, []string{comp + `.scaleDefinition.replicasPath: spec.roles is an array, not an object: it has no field "replicas" (schema: example.com/v1 Widget spec.roles)`}},
		{"iterating a scalar", `
      instanceIdPath: .spec.paused[]
`, okStatus, []string{comp + `.instanceIdPath: spec.paused is a boolean, not an array: it cannot be iterated with [] (schema: example.com/v1 Widget spec.paused)`}},
		{"indexing an object by number", `
      instanceIdPath: .spec.pools[0]
`, okStatus, []string{comp + `.instanceIdPath: spec.pools is an object, not an array: it cannot be indexed by a number (schema: example.com/v1 Widget spec.pools)`}},
		{"replicas from a string", `
      scaleDefinition: {replicasPath: '.spec.roles[0].name'}
`, okStatus, []string{comp + `.scaleDefinition.replicasPath: spec.roles[*].name is a string, but the path must yield replica counts (integers, or int-or-string) (schema: example.com/v1 Widget spec.roles[*].name)`}},
		{"replicas from int-or-string, a map, a literal", `
      scaleDefinition:
        replicasPath: .spec.size
        minReplicasPath: '.spec.pools[]?.count'
        maxReplicasPath: '.spec.pools["gpu"].count // 4'
`, okStatus, nil},
		{"replicas from a number", `
      scaleDefinition: {replicasPath: .spec.scale}
`, okStatus, []string{comp + `.scaleDefinition.replicasPath: warning: spec.scale is a number that may be a fraction; replica counts are integers (schema: example.com/v1 Widget spec.scale)`}},
		{"into preserve-unknown-fields", `
      scaleDefinition: {replicasPath: .spec.extra.count}
      instanceIdPath: .spec.child.metadata.name
`, okStatus, []string{comp + `.scaleDefinition.replicasPath: warning: cannot tell whether the path yields replica counts (integers, or int-or-string): enters x-kubernetes-preserve-unknown-fields at spec.extra (schema: example.com/v1 Widget the object)`}},
		{"a pod template that is a pod spec", `
      specDefinition: {podTemplateSpecPath: '.spec.roles[0].template.spec'}
`, okStatus, []string{comp + `.specDefinition.podTemplateSpecPath: spec.roles[*].template.spec is a pod spec (it has containers), not a pod template; use podSpecPath (schema: example.com/v1 Widget spec.roles[*].template.spec)`}},
		{"a pod spec that is a pod template", `
      specDefinition: {podSpecPath: '.spec.roles[0].template'}
`, okStatus, []string{comp + `.specDefinition.podSpecPath: spec.roles[*].template is a pod template (it has spec.containers), not a pod spec; use podTemplateSpecPath (schema: example.com/v1 Widget spec.roles[*].template)`}},
		{"a pod template without containers", `
      specDefinition: {podTemplateSpecPath: '.spec.pools.a'}
`, okStatus, []string{comp + `.specDefinition.podTemplateSpecPath: spec.pools.*: it has no spec; a pod template is {metadata, spec} (schema: example.com/v1 Widget spec.pools.*)`}},
		{"the template's bare metadata is ObjectMeta", `
      specDefinition:
        fragmentedPodSpecDefinition:
          labelsPath: '.spec.roles[0].template.metadata.labels'
          imagePath: '.spec.roles[0].template.metadata.labels["app"]'
          containersPath: '.spec.roles[0].template.spec.containers'
          schedulerNamePath: '.metadata.annotations["scheduler"] // "default-scheduler"'
`, okStatus, nil},
		{"fragments of the wrong type", `
      specDefinition:
        fragmentedPodSpecDefinition:
          labelsPath: '.spec.roles'
          imagePath: '.spec.paused'
`, okStatus, []string{
			comp + `.specDefinition.fragmentedPodSpecDefinition.labelsPath: spec.roles is an array, but the path must yield objects (schema: example.com/v1 Widget spec.roles)`,
			comp + `.specDefinition.fragmentedPodSpecDefinition.imagePath: spec.paused is a boolean, but the path must yield strings (schema: example.com/v1 Widget spec.paused)`,
		}},
		{"select narrows by type and key", `
      specDefinition:
        fragmentedPodSpecDefinition:
          containerPath: 'first(.spec[] | select(type == "object" and has("count")))'
          podAffinityPath: '.spec | to_entries[0].value'
`, okStatus, []string{comp + `.specDefinition.fragmentedPodSpecDefinition.podAffinityPath: warning: cannot tell whether the path yields objects: computed values are not checked (schema: example.com/v1 Widget the object)`}},
		{"a view merges objects and concatenates arrays", `
      specDefinition:
        podTemplateSpecPath: '.spec.roles[0].template'
        view:
          podTemplateSpec: '.spec.roles[0].template + {spec: (.spec.roles[0].template.spec + {containers: (.spec.roles[0].template.spec.containers + [{name: "s"}])})}'
`, okStatus, nil},
		{"a view reads the schema like a path", `
      specDefinition:
        podTemplateSpecPath: '.spec.roles[0].template'
        view: {podTemplateSpec: '.spec.role[0].template + {}'}
`, okStatus, []string{comp + `.specDefinition.view.podTemplateSpec: spec has no field "role"; did you mean "roles"? ` +
			`(it has: child, extra, paused, pools, roles, scale, size) (schema: example.com/v1 Widget spec)`}},
		{"a view of the wrong type", `
      specDefinition:
        fragmentedPodSpecDefinition: {imagePath: '.spec.roles[0].name'}
        view: {image: '.spec.roles[0].template.spec.containers + []'}
`, okStatus, []string{comp + `.specDefinition.view.image: the path computes an array, not strings (schema: example.com/v1 Widget the object)`}},
		{"nested arrays and variables", `
      instanceIdPath: '.status.history[][]'
      scaleDefinition: {replicasPath: '.spec.roles | length', minReplicasPath: '.spec as $s | $s.size', maxReplicasPath: '.spec.roles as [$r] | $r.replicas'}
`, okStatus, []string{comp + `.scaleDefinition.maxReplicasPath: warning: cannot tell whether the path yields replica counts (integers, or int-or-string): the variable $r (schema: example.com/v1 Widget the object)`}},
		{"paths inside expressions and conditions", ``, `        conditionsDefinition: {path: .status.conditions, typeFieldName: kind, statusFieldName: state, messageFieldName: "", reasonFieldName: ""}
        phaseDefinition: {path: .status.state}
        statusMappings:
          running: [{byPhase: Busy}]
          failed: [{byPhase: Failed}]
          degraded: [{byExpression: {expression: '[.status.conditions[]? | select(.kind == "X" and .reason == "Y")] | length', expectedResult: "1"}}]`,
			[]string{
				`spec.structureDefinition.rootComponent.statusDefinition.statusMappings.failed[0].byPhase: "Failed" is not a phase the schema allows (status.state: Broken, Busy, Idle) (schema: example.com/v1 Widget status.state)`,
				`spec.structureDefinition.rootComponent.statusDefinition.statusMappings.degraded[0].byExpression.expression: status.conditions[*] has no field "reason" (it has: kind, state) (schema: example.com/v1 Widget status.conditions[*])`,
			}},
		{"conditions without the named fields", ``, `        conditionsDefinition: {path: .status.conditions}
        statusMappings:
          running: [{byConditions: [{type: Ready}]}]`,
			[]string{
				`spec.structureDefinition.rootComponent.statusDefinition.conditionsDefinition.typeFieldName: the conditions at status.conditions have no field "type" (they have: kind, state) (schema: example.com/v1 Widget status.conditions[*])`,
				`spec.structureDefinition.rootComponent.statusDefinition.conditionsDefinition.statusFieldName: the conditions at status.conditions have no field "status" (they have: kind, state) (schema: example.com/v1 Widget status.conditions[*])`,
				`spec.structureDefinition.rootComponent.statusDefinition.conditionsDefinition.messageFieldName: warning: the conditions at status.conditions have no field "message" (they have: kind, state); set it to "" if they have none (schema: example.com/v1 Widget status.conditions[*])`,
				`spec.structureDefinition.rootComponent.statusDefinition.conditionsDefinition.reasonFieldName: warning: the conditions at status.conditions have no field "reason" (they have: kind, state); set it to "" if they have none (schema: example.com/v1 Widget status.conditions[*])`,
			}},
		{"conditions that are not a list", ``, `        conditionsDefinition: {path: .status.state}
        statusMappings:
          running: [{byConditions: [{type: Ready}]}]`,
			[]string{`spec.structureDefinition.rootComponent.statusDefinition.conditionsDefinition.path: status.state is a string, but the path must yield condition lists (arrays of objects) (schema: example.com/v1 Widget status.state)`}},
		{"suspend values against their fields", `
      suspendDefinition:
        suspendActions: [{path: .spec.paused, value: "true"}, {path: .spec.size, value: '"2"'}, {path: .spec.scale, value: "1"}]
        resumeActions: [{path: .spec.paused, value: "1"}]
`, okStatus, []string{comp + `.suspendDefinition.resumeActions[0].value: the value is an integer, but spec.paused is a boolean (schema: example.com/v1 Widget spec.paused)`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := widgetKarta(t, tc.component, tc.status)
			var got []string
			for _, p := range schemacheck.Check(c, s) {
				got = append(got, p.String())
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// The problems carry the schema path apart from the message.
func TestCheckSchemaPath(t *testing.T) {
	s := loadSchema(t, "testdata/widget-crd.yaml", widget)
	c := widgetKarta(t, "      instanceIdPath: .spec.roles[].nam\n", okStatus)
	got := schemacheck.Check(c, s)
	require.Len(t, got, 1)
	assert.Equal(t, "spec.roles[*]", got[0].SchemaPath)
	assert.Equal(t, "spec.structureDefinition.childComponents[0].instanceIdPath", got[0].Field)
	assert.Equal(t, karta.SeverityError, got[0].Severity)
	assert.Equal(t, got.Karta()[0], got[0].Problem)
}

// The examples' TrainJob Karta fits the TrainJob CRD, and the drifted copy
// does not.
func TestCheckTrainJob(t *testing.T) {
	s := loadSchema(t, "../../examples/tutorial-trainjob/crd.yaml", schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "TrainJob"})
	for file, errors := range map[string]int{"../../examples/kartas/trainjob.yaml": 0, "../../examples/kartas/trainjob-drifted.yaml": 4} {
		ks, err := karta.LoadFile(file)
		require.NoError(t, err)
		c, err := karta.Check(ks[0], interpreter.ValidateOptions())
		require.NoError(t, err)
		problems := schemacheck.Check(c, s).Karta()
		assert.Len(t, problems.Errors(), errors, "%s: %v", file, problems)
		assert.Empty(t, problems.Warnings(), file)
	}
}

func TestLookupAndDecode(t *testing.T) {
	data, err := os.ReadFile("testdata/widget-crd.yaml")
	require.NoError(t, err)
	crds, err := schemacheck.DecodeCRDs(append([]byte("# leading comment only\n---\n"), data...), "w.yaml")
	require.NoError(t, err)
	set, err := schemacheck.NewSet(crds...)
	require.NoError(t, err)
	_, err = set.Lookup(schema.GroupVersionKind{Group: "example.com", Version: "v2", Kind: "Widget"})
	assert.ErrorIs(t, err, schemacheck.ErrNoVersion)
	assert.EqualError(t, err, "CRD widgets.example.com: no such version v2 (it has: v1)")
	_, err = set.Lookup(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gadget"})
	assert.ErrorIs(t, err, schemacheck.ErrNoCRD)

	list := "apiVersion: v1\nkind: List\nitems:\n- " + indent(string(data)) + "\n"
	crds, err = schemacheck.DecodeCRDs([]byte(list), "list.yaml")
	require.NoError(t, err)
	assert.Len(t, crds, 1)

	for in, want := range map[string]string{
		"":                            "x.yaml: no CustomResourceDefinition found",
		"apiVersion: v1\nkind: Pod\n": `x.yaml: not an apiextensions.k8s.io/v1 CustomResourceDefinition: found apiVersion "v1" and kind "Pod"`,
		"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: {grup: x}\n": `x.yaml: unknown field "grup"`,
	} {
		_, err := schemacheck.DecodeCRDs([]byte(in), "x.yaml")
		assert.EqualError(t, err, want)
	}
}

// indent makes a YAML document a list item's body.
func indent(s string) string {
	out := []byte{}
	for i := 0; i < len(s); i++ {
		out = append(out, s[i])
		if s[i] == '\n' && i+1 < len(s) {
			out = append(out, ' ', ' ')
		}
	}
	return string(out)
}

// A gang's minMemberPath and a per-replica countPath read the object, so
// they are checked as counts.
func TestCheckGangMinMemberPath(t *testing.T) {
	s := loadSchema(t, "testdata/widget-crd.yaml", widget)
	checked := func(gang string) *karta.Checked {
		text := `apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: widget}
spec:
  structureDefinition:
    rootComponent:
      name: widget
      kind: {group: example.com, version: v1, kind: Widget}
      statusDefinition:
` + okStatus + `
    childComponents:
    - name: role
      ownerRef: widget
      specDefinition: {podTemplateSpecPath: '.spec.roles[0].template'}
  instructions:
    gangScheduling:
` + gang
		ks, err := karta.Load([]byte(text), "widget.yaml")
		require.NoError(t, err)
		c, problems := karta.Analyze(ks[0], interpreter.ValidateOptions())
		require.Empty(t, problems.Errors(), "the Karta itself is valid")
		return c
	}
	cases := []struct {
		name, gang string
		want       []string
	}{
		{"int-or-string fits", `      podGroups: [{name: all, minMemberPath: .spec.size, members: [{componentName: role}]}]`, nil},
		{"a string does not", `      podGroups: [{name: all, minMemberPath: .status.state, members: [{componentName: role}]}]`,
			[]string{`spec.instructions.gangScheduling.podGroups[0].minMemberPath: status.state is a string, but the path must yield replica counts (integers, or int-or-string) (schema: example.com/v1 Widget status.state)`}},
		{"v2: a field the schema does not have", `      podGroup: {name: all, minMemberPath: .spec.sise, subGroups: [{componentName: role}]}`,
			[]string{`spec.instructions.gangScheduling.podGroup.minMemberPath: spec has no field "sise"`}},
		{"v2: a per-replica countPath is a count, its keyPath reads pods",
			`      podGroup: {name: all, subGroups: [{componentName: role, perReplica: {countPath: .status.state, keyPath: .metadata.nosuch}}]}`,
			[]string{`spec.instructions.gangScheduling.podGroup.subGroups[0].perReplica.countPath: status.state is a string, but the path must yield replica counts`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := schemacheck.Check(checked(tc.gang), s)
			require.Len(t, got, len(tc.want), "%v", got)
			for i, w := range tc.want {
				assert.Contains(t, got[i].Field+": "+got[i].Message, w)
			}
		})
	}
}

// any/all and the *_by builtins run their condition on the elements, not
// on the input: a field of the elements is found, a misspelt one refuted.
func TestCheckElementwiseBuiltins(t *testing.T) {
	s := loadSchema(t, "testdata/widget-crd.yaml", widget)
	comp := "spec.structureDefinition.childComponents[0]"
	for _, tc := range []struct {
		expr string
		want string
	}{
		{`any(.spec.roles[]; .name == "x")`, ""},
		{`all(.spec.roles[]; .replicas > 0)`, ""},
		{`.spec.roles | any(.index == 0)`, ""},
		{`.spec.roles | sort_by(.index) | length`, ""},
		{`any(.spec.roles[]; .nam == "x")`, `spec.roles[*] has no field "nam"`},
		{`.spec.roles | max_by(.indx) | length`, `spec.roles[*] has no field "indx"`},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			c := widgetKarta(t, "      scaleDefinition: {replicasPath: '"+tc.expr+" | if . then 1 else 0 end'}\n", okStatus)
			got := schemacheck.Check(c, s).Karta().Errors()
			if tc.want == "" {
				assert.Empty(t, got)
				return
			}
			require.Len(t, got, 1, "%v", got)
			assert.Equal(t, comp+".scaleDefinition.replicasPath", got[0].Field)
			assert.Contains(t, got[0].Message, tc.want)
		})
	}
}

// A reference's expressions are checked through the schema of its kind
// when the caller has it: the Widget reads its template Widget ($tpl, a
// lookup) and its sibling Widgets ($peers, a list), bound also through
// `as`; without the schema they are values the check cannot tell.
func TestCheckReferences(t *testing.T) {
	s := loadSchema(t, "testdata/widget-crd.yaml", widget)
	const comp = "spec.structureDefinition.childComponents[0]"
	const references = `  - name: tpl
    kind: {group: example.com, version: v1, kind: Widget}
    lookup: {name: .spec.template}
  - name: peers
    kind: {group: example.com, version: v1, kind: Widget}
    list: {labelSelector: '{matchLabels: {app: .metadata.name}}'}
`
	for _, tc := range []struct {
		name, component string
		refs            bool
		want            []string
	}{
		{"fitting paths through both shapes", `
      scaleDefinition:
        replicasPath: '$tpl.spec.roles[0].replicas'
        minReplicasPath: '[$peers[].spec.roles[]?.index] | length'
      specDefinition: {podTemplateSpecPath: '$tpl as $t | $t.spec.roles[0].template'}
`, true, nil},
		{"a typo in the referenced object", `
      scaleDefinition: {replicasPath: '$tpl.spec.role[0].replicas'}
`, true, []string{comp + `.scaleDefinition.replicasPath: $tpl.spec has no field "role"; did you mean "roles"? ` +
			`(it has: child, extra, paused, pools, roles, scale, size) (schema: example.com/v1 Widget $tpl.spec)`}},
		{"a role the referenced field does not fit", `
      scaleDefinition: {replicasPath: '$peers[0].spec.roles[0].name'}
`, true, []string{comp + `.scaleDefinition.replicasPath: $peers[*].spec.roles[*].name is a string, but the path must yield replica counts (integers, or int-or-string) (schema: example.com/v1 Widget $peers[*].spec.roles[*].name)`}},
		{"a typo through an as binding of the workload", `
      scaleDefinition: {replicasPath: '. as $w | $w.spec.role[0].replicas'}
`, true, []string{comp + `.scaleDefinition.replicasPath: spec has no field "role"; did you mean "roles"? ` +
			`(it has: child, extra, paused, pools, roles, scale, size) (schema: example.com/v1 Widget spec)`}},
		{"without the referenced kind's schema", `
      scaleDefinition: {replicasPath: '$tpl.spec.role[0].replicas'}
`, false, []string{comp + `.scaleDefinition.replicasPath: warning: cannot tell whether the path yields replica counts (integers, or int-or-string): the variable $tpl (schema: example.com/v1 Widget the object)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var refs []*schemacheck.Schema
			if tc.refs {
				refs = append(refs, s)
			}
			var got []string
			for _, p := range schemacheck.Check(widgetKartaWith(t, references, tc.component, okStatus), s, refs...) {
				got = append(got, p.String())
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
