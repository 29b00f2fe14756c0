package karta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// karta returns a small valid Karta document with the given apiVersion,
// kind and name, ending in a newline. Its root conditionsDefinition is on
// line 12.
func kartaDoc(apiVersion, kind, name string) string {
	return fmt.Sprintf(`apiVersion: %s
kind: %s
metadata:
  name: %s
spec:
  structureDefinition:
    rootComponent:
      name: %s
      kind: {group: example.com, version: v1, kind: Thing}
      statusDefinition:
        conditionsDefinition:
          path: .status.conditions
        statusMappings:
          running: [{byConditions: [{type: Ready, status: "True"}]}]
`, apiVersion, kind, name, name)
}

// minimal is kartaDoc in the primary group.
func minimal(name string) string { return kartaDoc("run.ai/v1alpha1", "Karta", name) }

// header is the start of a Karta document, for inputs that add their own
// spec.
const header = "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata: {name: x}\n"

// loadErrs loads an input that must fail and returns its problems.
func loadErrs(t *testing.T, in string) LoadErrors {
	t.Helper()
	ks, err := Load([]byte(in), "in.yaml")
	require.Error(t, err)
	assert.Nil(t, ks, "no partial result")
	var errs LoadErrors
	require.True(t, errors.As(err, &errs), "errors.As LoadErrors: %T", err)
	require.NotEmpty(t, errs)
	return errs
}

// loadOne loads an input that must hold exactly one valid Karta.
func loadOne(t *testing.T, in string) *Karta {
	t.Helper()
	ks, err := Load([]byte(in), "in.yaml")
	require.NoError(t, err)
	require.Len(t, ks, 1)
	return ks[0]
}

func TestLoadAPIVersionAndKind(t *testing.T) {
	accepted := []struct{ apiVersion, kind string }{
		{"run.ai/v1alpha1", "Karta"},
		{"optimization.nvidia.com/v1alpha1", "ResourceInterface"},
		{"run.ai/v1alpha1", "ResourceInterface"},
		{"optimization.nvidia.com/v1alpha1", "Karta"},
	}
	for _, tc := range accepted {
		t.Run(tc.apiVersion+" "+tc.kind, func(t *testing.T) {
			k := loadOne(t, kartaDoc(tc.apiVersion, tc.kind, "x"))
			assert.Equal(t, tc.apiVersion, k.APIVersion)
			assert.Equal(t, tc.kind, k.Kind)
			assert.True(t, IsKartaGVK(k.GroupVersionKind()))
		})
	}

	rejected := []struct {
		name, in, field, want string
		line                  int
	}{
		{"deployment", kartaDoc("apps/v1", "Deployment", "x"), "",
			`not a Karta: found apiVersion "apps/v1" and kind "Deployment"; a Karta has apiVersion run.ai/v1alpha1 and kind Karta (or the legacy apiVersion optimization.nvidia.com/v1alpha1 and kind ResourceInterface)`, 1},
		{"wrong version", kartaDoc("run.ai/v1", "Karta", "x"), "", `found apiVersion "run.ai/v1" and kind "Karta"`, 1},
		{"legacy kind in other group", kartaDoc("apps/v1", "ResourceInterface", "x"), "", `found apiVersion "apps/v1"`, 1},
		{"bad apiVersion syntax", kartaDoc("a/b/c", "Karta", "x"), "", `found apiVersion "a/b/c"`, 1},
		{"missing apiVersion", "kind: Karta\nmetadata: {name: x}\n", "apiVersion", "missing; a Karta has apiVersion run.ai/v1alpha1", 1},
		{"missing kind", "metadata: {name: x}\napiVersion: run.ai/v1alpha1\n", "kind", "missing; a Karta has apiVersion", 1},
		{"null kind", "apiVersion: run.ai/v1alpha1\nkind: null\n", "kind", "missing;", 2},
		{"both missing", "metadata: {name: x}\n", "", "apiVersion and kind are missing; is this a Karta?", 1},
		{"number apiVersion", "apiVersion: 1\nkind: Karta\n", "apiVersion", "expected string, got number", 1},
		{"list kind", "apiVersion: run.ai/v1alpha1\nkind: [Karta]\n", "kind", "expected string, got list", 2},
	}
	for _, tc := range rejected {
		t.Run(tc.name, func(t *testing.T) {
			errs := loadErrs(t, tc.in)
			require.Len(t, errs, 1, errs.Error())
			assert.Equal(t, tc.field, errs[0].Field)
			assert.Contains(t, errs[0].Message, tc.want)
			assert.Equal(t, tc.line, errs[0].Line)
			assert.Equal(t, 1, errs[0].Document)
		})
	}
}

func TestLoadSamples(t *testing.T) {
	t.Run("pytorchjob", func(t *testing.T) {
		ks, err := LoadFile("testdata/load/pytorchjob.yaml")
		require.NoError(t, err)
		require.Len(t, ks, 1)
		k := ks[0]
		assert.Equal(t, "pytorchjob", k.Name)
		sd := k.Spec.StructureDefinition
		require.NotNil(t, sd.RootComponent)
		assert.Equal(t, "kubeflow.org", sd.RootComponent.Kind.Group)
		require.Len(t, sd.ChildComponents, 2)
		assert.Equal(t, "worker", sd.ChildComponents[1].Name)
		assert.Equal(t, "pytorchjob", *sd.ChildComponents[1].OwnerRef)
		assert.Equal(t, ".spec.elasticPolicy.minReplicas", sd.ChildComponents[1].ScaleDefinition.MinReplicasPath)
		cd := sd.RootComponent.StatusDefinition.ConditionsDefinition
		assert.Equal(t, ConditionsDefinition{Path: ".status.conditions", TypeFieldName: "type", StatusFieldName: "status",
			MessageFieldName: "message", ReasonFieldName: "reason"}, *cd)
		v, err := sd.RootComponent.SuspendDefinition.SuspendActions[0].DecodedValue()
		require.NoError(t, err)
		assert.Equal(t, true, v)
		require.NotNil(t, k.Spec.EffectiveInstructions())
		assert.Len(t, k.Spec.Instructions.GangScheduling.PodGroups[0].Members, 2)
		assert.Equal(t, "0", sd.RootComponent.StatusDefinition.StatusMappings.Initializing[0].ByExpression.ExpectedResult)
	})
	t.Run("jobset", func(t *testing.T) {
		ks, err := LoadFile("testdata/load/jobset.yaml")
		require.NoError(t, err)
		require.Len(t, ks, 1)
		k := ks[0]
		assert.Equal(t, "jobset", k.Name)
		assert.Equal(t, KartaStatus{}, k.Status, "status is ignored")
		child := k.Spec.StructureDefinition.ChildComponents[0]
		assert.Equal(t, ".spec.replicatedJobs[]?.name", child.InstanceIDPath)
		assert.Nil(t, child.PodSelector.ComponentTypeSelector.Value)
		// A non-string suspend value is the JSON value itself.
		v, err := k.Spec.StructureDefinition.RootComponent.SuspendDefinition.ResumeActions[0].DecodedValue()
		require.NoError(t, err)
		assert.Equal(t, false, v)
		assert.Len(t, k.Spec.StructureDefinition.RootComponent.StatusDefinition.StatusMappings.Running, 2)
	})
	t.Run("legacy json", func(t *testing.T) {
		ks, err := LoadFile("testdata/load/legacy.json")
		require.NoError(t, err)
		require.Len(t, ks, 1)
		k := ks[0]
		assert.Equal(t, "ResourceInterface", k.Kind)
		assert.Nil(t, k.Spec.Instructions)
		require.NotNil(t, k.Spec.EffectiveInstructions())
		assert.Equal(t, "rack", k.Spec.OptimizationInstructions.GangScheduling.PodGroup.SubGroups[0].Topology.TopologyName)
		cd := k.Spec.StructureDefinition.RootComponent.StatusDefinition.ConditionsDefinition
		assert.Equal(t, "", cd.MessageFieldName, `explicit "" is kept`)
		assert.Equal(t, "reason", cd.ReasonFieldName, "null is defaulted")
	})
	t.Run("multi", func(t *testing.T) {
		ks, err := LoadFile("testdata/load/multi.yaml")
		require.NoError(t, err)
		require.Len(t, ks, 2)
		assert.Equal(t, "first", ks[0].Name)
		assert.Equal(t, "second", ks[1].Name)
		assert.Equal(t, "optimization.nvidia.com/v1alpha1", ks[1].APIVersion)
	})
	t.Run("every sample round-trips", func(t *testing.T) {
		files, err := filepath.Glob("testdata/load/*")
		require.NoError(t, err)
		require.NotEmpty(t, files)
		for _, f := range files {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			ks, err := Load(data, f)
			require.NoError(t, err, f)
			assertRoundTrip(t, ks)
		}
	})
}

// assertRoundTrip checks that each Karta re-marshals to JSON that loads
// again to the same JSON.
func assertRoundTrip(t testing.TB, ks []*Karta) {
	t.Helper()
	for i, k := range ks {
		first, err := json.Marshal(k)
		require.NoError(t, err)
		again, err := Load(first, "round-trip")
		require.NoError(t, err, "document %d: %s", i+1, first)
		require.Len(t, again, 1)
		second, err := json.Marshal(again[0])
		require.NoError(t, err)
		require.JSONEq(t, string(first), string(second))
		require.Equal(t, string(first), string(second))
	}
}

func TestLoadMultiDocument(t *testing.T) {
	t.Run("count and order, empty documents skipped", func(t *testing.T) {
		in := "---\n# only a comment\n---\n" + minimal("a") + "---\n" + minimal("b") + "...\n---\n" + minimal("c") + "---\n"
		ks, err := Load([]byte(in), "m.yaml")
		require.NoError(t, err)
		require.Len(t, ks, 3)
		assert.Equal(t, []string{"a", "b", "c"}, []string{ks[0].Name, ks[1].Name, ks[2].Name})
	})
	t.Run("an error in document 2 names document 2 and the absolute line", func(t *testing.T) {
		// Document 1 spans lines 1-14, the separator is line 15; an empty
		// document before it is not counted.
		doc2 := strings.Replace(minimal("b"), "      name: b\n", "      name: b\n      ownerName: x\n", 1)
		in := "---\n" + minimal("a") + "---\n" + doc2
		errs := loadErrs(t, "---\n---\n"+strings.TrimPrefix(in, "---\n"))
		require.Len(t, errs, 1, errs.Error())
		e := errs[0]
		assert.Equal(t, 2, e.Document)
		assert.True(t, e.MultiDoc)
		assert.Equal(t, "spec.structureDefinition.rootComponent.ownerName", e.Field)
		assert.Equal(t, `unknown field "ownerName"; did you mean "ownerRef"?`, e.Message)
		// "---" (1), "---" (2), doc 1 (3-16), "---" (17), doc 2 from 18;
		// ownerName is its 9th line.
		assert.Equal(t, 26, e.Line)
		assert.Equal(t, `in.yaml:26: document 2: spec.structureDefinition.rootComponent.ownerName: unknown field "ownerName"; did you mean "ownerRef"?`, e.Error())
	})
	t.Run("all documents are reported", func(t *testing.T) {
		in := "apiVersion: apps/v1\nkind: Deployment\n---\n" + minimal("ok") + "---\n" + header + "spec: {bogus: 1}\n"
		errs := loadErrs(t, in)
		require.Len(t, errs, 2, errs.Error())
		assert.Equal(t, 1, errs[0].Document)
		assert.Contains(t, errs[0].Message, "not a Karta")
		assert.Equal(t, 3, errs[1].Document)
		assert.Equal(t, "spec.bogus", errs[1].Field)
		assert.Equal(t, 22, errs[1].Line)
		for _, e := range errs {
			assert.True(t, e.MultiDoc)
		}
	})
	t.Run("a syntax error stops reading and keeps earlier problems", func(t *testing.T) {
		in := header + "spec: {bogus: 1}\n---\n" + minimal("b") + "---\nkind: [\n"
		errs := loadErrs(t, in)
		require.Len(t, errs, 2, errs.Error())
		assert.Equal(t, 1, errs[0].Document)
		assert.Equal(t, 3, errs[1].Document)
		assert.Contains(t, errs[1].Message, "invalid YAML")
		assert.True(t, errs[1].MultiDoc)
	})
	t.Run("a syntax error in the first document of a multi-document input", func(t *testing.T) {
		errs := loadErrs(t, "kind: [\nfoo: bar\n---\n"+minimal("b"))
		require.Len(t, errs, 1)
		assert.Equal(t, 1, errs[0].Document)
		assert.True(t, errs[0].MultiDoc, "more documents may follow")
	})
	t.Run("a syntax error in a single document", func(t *testing.T) {
		errs := loadErrs(t, "---\n"+header+"spec: {a: [1}\n")
		require.Len(t, errs, 1)
		assert.False(t, errs[0].MultiDoc)
		assert.Equal(t, "in.yaml:5: invalid YAML: did not find expected ',' or ']'", errs[0].Error())
	})
	t.Run("a single document is not numbered", func(t *testing.T) {
		errs := loadErrs(t, "---\n"+header+"spec: {bogus: 1}\n---\n")
		require.Len(t, errs, 1)
		assert.False(t, errs[0].MultiDoc)
		assert.Equal(t, 1, errs[0].Document)
		assert.Equal(t, "in.yaml:5: spec.bogus: unknown field \"bogus\"", errs[0].Error())
	})
}

func TestLoadConditionsDefaults(t *testing.T) {
	conditions := func(body string) string {
		return header + `spec:
  structureDefinition:
    rootComponent:
      name: r
      statusDefinition:
        conditionsDefinition:
` + body + `        statusMappings: {}
`
	}
	full := ConditionsDefinition{Path: ".c", TypeFieldName: "type", StatusFieldName: "status", MessageFieldName: "message", ReasonFieldName: "reason"}
	tests := []struct {
		name, body string
		want       ConditionsDefinition
	}{
		{"absent", "          path: .c\n", full},
		{"null", "          path: .c\n          typeFieldName: null\n          statusFieldName: ~\n          messageFieldName:\n          reasonFieldName: null\n", full},
		{"empty strings kept", "          path: .c\n          typeFieldName: \"\"\n          statusFieldName: ''\n          messageFieldName: \"\"\n          reasonFieldName: \"\"\n",
			ConditionsDefinition{Path: ".c"}},
		{"set values untouched", "          path: .c\n          typeFieldName: kind\n          statusFieldName: state\n          messageFieldName: msg\n          reasonFieldName: why\n",
			ConditionsDefinition{Path: ".c", TypeFieldName: "kind", StatusFieldName: "state", MessageFieldName: "msg", ReasonFieldName: "why"}},
		{"mixed", "          path: .c\n          statusFieldName: state\n          messageFieldName: \"\"\n",
			ConditionsDefinition{Path: ".c", TypeFieldName: "type", StatusFieldName: "state", MessageFieldName: "", ReasonFieldName: "reason"}},
		{"no path", "          typeFieldName: t\n", ConditionsDefinition{TypeFieldName: "t", StatusFieldName: "status", MessageFieldName: "message", ReasonFieldName: "reason"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := loadOne(t, conditions(tc.body))
			cd := k.Spec.StructureDefinition.RootComponent.StatusDefinition.ConditionsDefinition
			require.NotNil(t, cd)
			assert.Equal(t, tc.want, *cd)
		})
	}

	t.Run("children and aliases", func(t *testing.T) {
		k := loadOne(t, header+`spec:
  structureDefinition:
    rootComponent:
      name: r
      statusDefinition: {statusMappings: {}}
    childComponents:
    - name: a
      ownerRef: r
      statusDefinition:
        conditionsDefinition: &cd {path: .a, reasonFieldName: ""}
        statusMappings: {}
    - name: b
      ownerRef: r
    - name: c
      ownerRef: r
      statusDefinition:
        conditionsDefinition: *cd
        statusMappings: {}
`)
		sd := k.Spec.StructureDefinition
		assert.Nil(t, sd.RootComponent.StatusDefinition.ConditionsDefinition, "no conditionsDefinition is created")
		want := ConditionsDefinition{Path: ".a", TypeFieldName: "type", StatusFieldName: "status", MessageFieldName: "message"}
		assert.Equal(t, want, *sd.ChildComponents[0].StatusDefinition.ConditionsDefinition)
		assert.Nil(t, sd.ChildComponents[1].StatusDefinition)
		assert.Equal(t, want, *sd.ChildComponents[2].StatusDefinition.ConditionsDefinition)
	})
	t.Run("null conditionsDefinition stays absent", func(t *testing.T) {
		k := loadOne(t, header+"spec:\n  structureDefinition:\n    rootComponent:\n      name: r\n      statusDefinition: {conditionsDefinition: null, statusMappings: {}}\n")
		assert.Nil(t, k.Spec.StructureDefinition.RootComponent.StatusDefinition.ConditionsDefinition)
	})
	t.Run("a conditionsDefinition of the wrong type is reported, not defaulted", func(t *testing.T) {
		errs := loadErrs(t, header+"spec:\n  structureDefinition:\n    rootComponent:\n      name: r\n      statusDefinition: {conditionsDefinition: [a], statusMappings: {}}\n")
		require.Len(t, errs, 1)
		assert.Equal(t, "spec.structureDefinition.rootComponent.statusDefinition.conditionsDefinition", errs[0].Field)
		assert.Equal(t, "expected map, got list", errs[0].Message)
	})
}

func TestLoadUnknownFields(t *testing.T) {
	in := header + `spec:
  structureDefinition:
    rootComponent:
      name: r
      ownerName: x
    childComponents:
    - name: a
      ownerRef: r
    - name: b
      ownerRef: a
      specDefinition:
        fragmentedPodDefinition: {}
  luaScrip: "x"
extra: 1
`
	errs := loadErrs(t, in)
	require.Len(t, errs, 4, errs.Error())
	want := []struct {
		field, msg string
		line       int
	}{
		{"spec.structureDefinition.rootComponent.ownerName", `unknown field "ownerName"; did you mean "ownerRef"?`, 8},
		{"spec.structureDefinition.childComponents[1].specDefinition.fragmentedPodDefinition", `unknown field "fragmentedPodDefinition"; did you mean "fragmentedPodSpecDefinition"?`, 15},
		{"spec.luaScrip", `unknown field "luaScrip"; did you mean "luaScript"?`, 16},
		{"extra", `unknown field "extra"`, 17},
	}
	for i, w := range want {
		assert.Equal(t, w.field, errs[i].Field)
		assert.Equal(t, w.msg, errs[i].Message)
		assert.Equal(t, w.line, errs[i].Line)
		assert.Equal(t, 1, errs[i].Document)
		assert.False(t, errs[i].MultiDoc)
	}
	assert.Equal(t, `in.yaml:8: spec.structureDefinition.rootComponent.ownerName: unknown field "ownerName"; did you mean "ownerRef"?`, errs[0].Error())

	t.Run("keys with dots keep their path", func(t *testing.T) {
		errs := loadErrs(t, header+"spec:\n  a.b: 1\n  structureDefinition: {rootComponent: {name: r, \"x[0]\": 2}}\n")
		require.Len(t, errs, 2, errs.Error())
		assert.Equal(t, `spec["a.b"]`, errs[0].Field)
		assert.Equal(t, `unknown field "a.b"`, errs[0].Message)
		assert.Equal(t, 5, errs[0].Line)
		assert.Equal(t, `spec.structureDefinition.rootComponent["x[0]"]`, errs[1].Field)
		assert.Equal(t, 6, errs[1].Line)
	})
	t.Run("merged keys are found", func(t *testing.T) {
		errs := loadErrs(t, header+"base: &base {name: r, ownerName: x}\n")
		require.Len(t, errs, 1, errs.Error())
		assert.Equal(t, "base", errs[0].Field)
		errs = loadErrs(t, "x: &b {ownerName: o}\n"+header+"spec:\n  structureDefinition:\n    rootComponent:\n      <<: *b\n      name: r\n")
		require.Len(t, errs, 2, errs.Error())
		assert.Equal(t, "spec.structureDefinition.rootComponent.ownerName", errs[0].Field)
		assert.Equal(t, 1, errs[0].Line, "the line where the merged key is written")
		assert.Equal(t, "x", errs[1].Field)
	})
}

func TestLoadTypeErrors(t *testing.T) {
	tests := []struct {
		name, in, field, msg string
		line                 int
	}{
		{"boolean status", header + `spec:
  structureDefinition:
    rootComponent:
      name: r
      statusDefinition:
        statusMappings:
          running:
          - byConditions:
            - {type: A, status: "True"}
            - {type: B, status: True}
`, "spec.structureDefinition.rootComponent.statusDefinition.statusMappings.running[0].byConditions[1].status",
			`expected string, got boolean (quote it: "True")`, 13},
		{"yes is a string", header + "spec: {luaScript: yes, structureDefinition: {rootComponent: {name: no}}}\n", "", "", 0},
		{"JSON number for a string", `{"apiVersion": "run.ai/v1alpha1", "kind": "Karta",
 "metadata": {"name": "x"},
 "spec": {"structureDefinition": {"childComponents": [{"name": "a"}, {"name": 10}]}}}`,
			"spec.structureDefinition.childComponents[1].name", `expected string, got number (quote it: "10")`, 3},
		{"version number keeps its spelling", header + "spec:\n  structureDefinition:\n    rootComponent:\n      name: r\n      kind: {group: g, version: 1.10, kind: K}\n",
			"spec.structureDefinition.rootComponent.kind.version", `expected string, got number (quote it: "1.10")`, 8},
		{"list for a string", header + "spec:\n  structureDefinition:\n    childComponents:\n    - name: a\n    - name: b\n      ownerRef: [x]\n",
			"spec.structureDefinition.childComponents[1].ownerRef", "expected string, got list", 9},
		{"string for a map", header + "spec:\n  structureDefinition: text\n", "spec.structureDefinition", "expected map, got string", 5},
		{"map for a list", header + "spec:\n  structureDefinition:\n    childComponents: {a: 1}\n", "spec.structureDefinition.childComponents", "expected list, got map", 6},
		{"string for an integer", "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata:\n  generation: many\n", "metadata.generation", "expected integer, got string", 4},
		{"fraction for an integer", "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata:\n  generation: 1.5\n", "metadata.generation", "expected integer, got number 1.5", 4},
		{"bad label value", "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata:\n  labels:\n    training.kubeflow.org/job: true\n",
			`metadata.labels["training.kubeflow.org/job"]`, `expected string, got boolean (quote it: "true")`, 5},
		{"bad time", "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata:\n  creationTimestamp: yesterday\n",
			"metadata.creationTimestamp", `invalid time "yesterday"; write it in RFC 3339 form`, 4},
		{"time out of range", "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata:\n  managedFields:\n  - {manager: m}\n  - {manager: n, time: \"0000-01-01T00:00:00+01:00\"}\n",
			"metadata.managedFields[1].time", "the time is out of range", 6},
		{"a valid time", "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata:\n  creationTimestamp: 2025-01-02T03:04:05.5+02:00\n", "", "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.msg == "" {
				loadOne(t, tc.in)
				return
			}
			errs := loadErrs(t, tc.in)
			require.Len(t, errs, 1, errs.Error())
			assert.Equal(t, tc.field, errs[0].Field)
			assert.Contains(t, errs[0].Message, tc.msg)
			assert.Equal(t, tc.line, errs[0].Line)
			assert.NotContains(t, errs[0].Message, "karta.", "no Go type names")
			assert.NotContains(t, errs[0].Message, "Go struct")
		})
	}
}

func TestLoadStatusIgnored(t *testing.T) {
	in := minimal("x") + `status:
  conditions: [{type: Accepted, status: True}]
  bogus: {1: 2, [a]: b}
  deeper: {a: {b: {c: [1, 2, .inf]}}}
  when: !!binary aGVsbG8=
  twice: 1
  twice: 2
`
	k := loadOne(t, in)
	assert.Equal(t, KartaStatus{}, k.Status)
}

func TestLoadOddButValid(t *testing.T) {
	t.Run("timestamps stay text", func(t *testing.T) {
		k := loadOne(t, header+"spec:\n  luaScript: 2001-12-14\n  structureDefinition: {rootComponent: {name: 2001-12-14t21:59:43.10-05:00}}\n")
		assert.Equal(t, "2001-12-14", k.Spec.LuaScript)
		assert.Equal(t, "2001-12-14t21:59:43.10-05:00", k.Spec.StructureDefinition.RootComponent.Name)
	})
	t.Run("anchors, aliases and merges", func(t *testing.T) {
		k := loadOne(t, header+`spec:
  structureDefinition:
    rootComponent: {name: r}
    childComponents:
    - &child {name: a, ownerRef: r, podSelector: {componentTypeSelector: {keyPath: .k, value: a}}}
    - <<: *child
      name: b
`)
		cs := k.Spec.StructureDefinition.ChildComponents
		require.Len(t, cs, 2)
		assert.Equal(t, "b", cs[1].Name)
		assert.Equal(t, "a", *cs[1].PodSelector.ComponentTypeSelector.Value)
	})
	t.Run("suspend values keep JSON", func(t *testing.T) {
		k := loadOne(t, header+`spec:
  structureDefinition:
    rootComponent:
      name: r
      suspendDefinition:
        suspendActions: [{path: .a, value: 1.0}, {path: .b, value: {x: [1, "2"]}}, {path: .c, value: -0.0}]
        resumeActions: [{path: .a, value: null}]
`)
		acts := k.Spec.StructureDefinition.RootComponent.SuspendDefinition.SuspendActions
		assert.Equal(t, "1", string(acts[0].Value.Raw))
		assert.Equal(t, `{"x":[1,"2"]}`, string(acts[1].Value.Raw))
		assert.Equal(t, "0", string(acts[2].Value.Raw))
		assertRoundTrip(t, []*Karta{k})
	})
	t.Run("a UTF-8 byte order mark", func(t *testing.T) {
		loadOne(t, "\xef\xbb\xbf"+minimal("x"))
	})
	t.Run("CRLF line ends", func(t *testing.T) {
		errs := loadErrs(t, strings.ReplaceAll(header+"spec: {bogus: 1}\n", "\n", "\r\n"))
		require.Len(t, errs, 1)
		assert.Equal(t, 4, errs[0].Line)
	})
}

// hostileCase is an input that must fail with a clear message, quickly
// and without a panic. FuzzLoad uses them as seeds too.
type hostileCase struct {
	name string
	in   string
	want string // a fragment of the message
	line int    // the first problem's line; -1: not checked
	n    int    // the number of problems; 0: not checked
}

func hostileCases() []hostileCase {
	deepBlockMaps := func(levels int) string {
		var b strings.Builder
		b.WriteString(header + "spec:\n")
		for i := 1; i <= levels; i++ {
			b.WriteString(strings.Repeat(" ", i) + "a:\n")
		}
		b.WriteString(strings.Repeat(" ", levels+1) + "b: 1\n")
		return b.String()
	}
	billionLaughs := header + `spec:
  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]
  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]
  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]
  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]
  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]
  f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]
  g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]
  h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g,*g]
  i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h,*h]
`
	// Nine levels of maps whose aliases stay under the depth limit but
	// expand a billion-fold as well.
	var mapLaughs strings.Builder
	mapLaughs.WriteString(header + "spec:\n  l0: &l0 {a: lol, b: lol, c: lol, d: lol, e: lol, f: lol, g: lol, h: lol, i: lol, j: lol}\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&mapLaughs, "  l%d: &l%d {a: *l%d, b: *l%d, c: *l%d, d: *l%d, e: *l%d, f: *l%d, g: *l%d, h: *l%d, i: *l%d, j: *l%d}\n",
			i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	// An alias that is shallow where it is written but deep where it
	// expands.
	var deepAlias strings.Builder
	deepAlias.WriteString(header + "spec:\n  a: &a " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\n  b: " +
		strings.Repeat("[", 40) + "*a" + strings.Repeat("]", 40) + "\n")

	const depthMsg = "the document nests maps and lists more than 64 levels deep"
	return []hostileCase{
		// The YAML library's parser counts lines from 0; Load reports the
		// line where the unfinished flow map starts.
		{"truncated YAML", header + "spec:\n  structureDefinition:\n    rootComponent: {name: x\n", "invalid YAML: did not find expected ',' or '}'", 6, 1},
		{"truncated flow on line 1", "{a: [1, 2}", "invalid YAML: did not find expected ',' or ']'", 1, 1},
		{"truncated string", header + "spec: \"abc\n", "invalid YAML: found unexpected end of stream", 4, 1},
		{"bad indentation", header + "spec:\n  a: 1\n b: 2\n", "invalid YAML: did not find expected key", 6, 1},
		{"tab indentation", header + "spec:\n\tb: 1\n", "invalid YAML: found character that cannot start any token", 5, 1},
		{"truncated JSON", `{"apiVersion": "run.ai/v1alpha1", "kind": "Karta", "spec": {"structureDefinition": `, "invalid YAML", -1, 1},
		{"JSON number for a string", `{"apiVersion": "run.ai/v1alpha1", "kind": "Karta", "metadata": {"name": 12345678901234567890123}}`,
			`metadata.name: expected string, got number (quote it: "12345678901234567890123")`, 1, 1},
		{"flow lists 10000 deep", header + "spec: " + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "\n", depthMsg, 4, 1},
		{"flow maps 10000 deep", strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000), depthMsg, 1, 1},
		{"flow lists 100000 deep, unclosed", strings.Repeat("[", 100000), depthMsg, -1, 1},
		{"flow maps 10001 deep", strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001), depthMsg, -1, 1},
		{"block lists 10000 deep", header + "spec:\n" + strings.Repeat("- ", 10000) + "x\n", depthMsg, 5, 1},
		{"block lists 20000 deep", strings.Repeat("- ", 20000) + "x\n", depthMsg, -1, 1},
		{"block maps 1000 deep", deepBlockMaps(1000), depthMsg, 68, 1},
		{"deep through an alias", deepAlias.String(), depthMsg, 6, 1},
		{"not UTF-8", header + "spec:\n  luaScript: caf\xe9\n", fmt.Sprintf("input is not valid UTF-8 (byte offset %d)", len(header)+22), 5, 1},
		{"UTF-16", "\xff\xfea\x00:\x00", "input is not valid UTF-8 (byte offset 0)", 1, 1},
		{"NUL byte", header + "spec: {a: \x00}\n", fmt.Sprintf("input contains a NUL byte (byte offset %d)", len(header)+10), 4, 1},
		{"control character", header + "\x1b[31m", fmt.Sprintf("input contains the control character U+001B (byte offset %d)", len(header)), 4, 1},
		{"empty", "", "no Karta document found (the input is empty)", 0, 1},
		{"whitespace", " \n\n\t\n", "no Karta document found (the input is empty)", 0, 1},
		{"comments and separators", "# nothing\n---\n---\n...\n", "no Karta document found (the input holds only comments or empty documents)", 0, 1},
		{"integer key", header + "spec:\n  1: a\n", `the key 1 is a number, not a string; quote it: "1"`, 5, 1},
		{"boolean key", header + "spec:\n  true: a\n", `the key true is a boolean, not a string; quote it: "true"`, 5, 1},
		{"null key", header + "spec:\n  ~: a\n", `the key ~ is null, not a string`, 5, 1},
		{"empty key", header + "spec:\n  ? \n  : a\n", `a key is empty (null)`, 5, 1},
		{"list key", header + "spec:\n  [a, b]: c\n", "a key must be a string, not a list", 5, 1},
		{"map key", header + "spec:\n  ? {a: b}\n  : c\n", "a key must be a string, not a map", 5, 1},
		{"duplicate key", header + "spec:\n  luaScript: a\n  luaScript: b\n", `"luaScript" is given twice (first at line 5); keep one`, 6, 1},
		{"billion laughs", billionLaughs, "aliases (*name) expand to far more than the document itself", -1, 1},
		{"billion laughs in maps", mapLaughs.String(), "aliases (*name) expand to far more than the document itself", -1, 1},
		{"alias inside its own anchor", header + "spec: &s\n  a: *s\n", "the alias *s is used inside its own anchor &s", 5, 1},
		{"unknown alias", header + "spec: *nothing\n", "invalid YAML: unknown anchor 'nothing' referenced", 0, 1},
		{"top-level string", "hello\n", "a Karta document must be a map with apiVersion, kind, metadata and spec; this one is a string", 1, 1},
		{"top-level number", "42\n", "this one is a number", 1, 1},
		{"top-level list", "- a\n- b\n", "this one is a list", 1, 1},
		{"top-level null", "null\n", "this one is null", 1, 1},
		{"top-level JSON array", "[" + `{"apiVersion": "run.ai/v1alpha1", "kind": "Karta"}` + "]", "this one is a list", 1, 1},
		{"infinity", header + "spec: {luaScript: .inf}\n", `.inf is not a number JSON can hold; quote it if it is text: ".inf"`, 4, 1},
		{"NaN", header + "spec:\n  structureDefinition:\n    rootComponent:\n      suspendDefinition: {suspendActions: [{path: .a, value: .nan}]}\n", ".nan is not a number JSON can hold", 7, 1},
		{"binary", header + "spec: {luaScript: !!binary aGVsbG8=}\n", "binary (!!binary) values are not supported", 4, 1},
		{"bad escape", header + "spec: {luaScript: \"\\ud800\"}\n", "invalid YAML: found invalid Unicode character escape code", 4, 1},
		{"bad merge", header + "spec:\n  <<: 5\n", "map merge requires map or sequence of maps as the value", 0, 1},
		{"wrong tag", header + "spec: {luaScript: !!int abc}\n", "cannot decode !!str `abc` as a !!int", -1, 1},
		{"many bad keys are capped", header + "spec:\n" + strings.Repeat("  1: a\n", 200), "more problems follow", -1, maxProblemsPerDocument + 1},
	}
}

func TestLoadHostileInputs(t *testing.T) {
	tests := hostileCases()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			errs := loadErrs(t, tc.in)
			assert.Less(t, time.Since(start), 10*time.Second)
			if tc.n > 0 {
				require.Len(t, errs, tc.n, errs.Error())
				assert.Equal(t, tc.n-1, strings.Count(errs.Error(), "\n"), "one problem per line")
			}
			assert.Contains(t, errs.Error(), tc.want)
			if tc.line >= 0 {
				assert.Equal(t, tc.line, errs[0].Line, errs.Error())
			}
			for _, e := range errs {
				assert.Equal(t, "in.yaml", e.Source)
				assert.NotContains(t, e.Message, "yaml:", "library prefixes are removed")
			}
		})
	}

	t.Run("20 MB input is refused without parsing", func(t *testing.T) {
		big := bytes.Repeat([]byte("["), 20<<20) // would be a YAML error if parsed
		start := time.Now()
		ks, err := Load(big, "big.yaml")
		assert.Less(t, time.Since(start), time.Second)
		require.Nil(t, ks)
		var errs LoadErrors
		require.True(t, errors.As(err, &errs))
		require.Len(t, errs, 1)
		assert.Equal(t, "big.yaml: the input is larger than 8388608 bytes, the most a Karta file may be; is it the right file?", err.Error())
		assert.Equal(t, 0, errs[0].Document)
	})
	t.Run("just at the size limit is read", func(t *testing.T) {
		in := []byte(minimal("x"))
		_, err := LoadWithOptions(in, "", LoadOptions{MaxBytes: int64(len(in))})
		require.NoError(t, err)
		_, err = LoadWithOptions(in, "", LoadOptions{MaxBytes: int64(len(in)) - 1})
		require.ErrorContains(t, err, fmt.Sprintf("larger than %d bytes", len(in)-1))
	})
}

func TestLoadMaxDepthOption(t *testing.T) {
	// The minimal Karta nests 10 levels: the document, spec,
	// structureDefinition, rootComponent, statusDefinition, statusMappings,
	// running, its matcher, byConditions and its condition.
	in := minimal("x")
	_, err := LoadWithOptions([]byte(in), "", LoadOptions{MaxDepth: 10})
	require.NoError(t, err)
	_, err = LoadWithOptions([]byte(in), "", LoadOptions{MaxDepth: 9})
	require.ErrorContains(t, err, "more than 9 levels deep")
	var errs LoadErrors
	require.True(t, errors.As(err, &errs))
	assert.Equal(t, 14, errs[0].Line)

	// Past the YAML library's own limit, the message names that limit.
	_, err = LoadWithOptions([]byte(strings.Repeat("[", 20000)), "", LoadOptions{MaxDepth: 50000})
	require.ErrorContains(t, err, "more than 10000 levels deep")
}

func TestLoadFile(t *testing.T) {
	t.Run("missing file", func(t *testing.T) {
		ks, err := LoadFile("testdata/load/does-not-exist.yaml")
		require.Nil(t, ks)
		require.Error(t, err)
		assert.True(t, errors.Is(err, fs.ErrNotExist))
		var errs LoadErrors
		require.True(t, errors.As(err, &errs))
		require.Len(t, errs, 1)
		var pe *fs.PathError
		assert.True(t, errors.As(err, &pe))
		assert.Equal(t, "testdata/load/does-not-exist.yaml: cannot read: no such file or directory", err.Error())
	})
	t.Run("dash is a file name", func(t *testing.T) {
		dir := t.TempDir()
		t.Chdir(dir)
		_, err := LoadFile("-")
		assert.True(t, errors.Is(err, fs.ErrNotExist))
		require.NoError(t, os.WriteFile("-", []byte(minimal("dash")), 0o600))
		ks, err := LoadFile("-")
		require.NoError(t, err)
		assert.Equal(t, "dash", ks[0].Name)
	})
	t.Run("a directory", func(t *testing.T) {
		_, err := LoadFile(t.TempDir())
		var errs LoadErrors
		require.True(t, errors.As(err, &errs))
		assert.Contains(t, err.Error(), "cannot read: ")
	})
	t.Run("errors name the file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "bad.yaml")
		require.NoError(t, os.WriteFile(path, []byte(header+"spec: {x: 1}\n"), 0o600))
		_, err := LoadFile(path)
		assert.Equal(t, path+`:4: spec.x: unknown field "x"`, err.Error())
	})
}

// countingReader yields an endless stream of 'a' and counts what it gave.
type countingReader struct{ n int64 }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	r.n += int64(len(p))
	return len(p), nil
}

// failingReader fails after its data.
type failingReader struct{ data io.Reader }

func (r failingReader) Read(p []byte) (int, error) {
	n, err := r.data.Read(p)
	if err == io.EOF {
		return n, errors.New("connection reset")
	}
	return n, err
}

func TestLoadReader(t *testing.T) {
	t.Run("reads", func(t *testing.T) {
		ks, err := LoadReader(strings.NewReader(minimal("r")), "stdin")
		require.NoError(t, err)
		assert.Equal(t, "r", ks[0].Name)
	})
	t.Run("an endless stream stops at the limit", func(t *testing.T) {
		r := &countingReader{}
		ks, err := LoadReader(r, "stdin")
		require.Nil(t, ks)
		assert.Equal(t, "stdin: the input is larger than 8388608 bytes, the most a Karta file may be; is it the right file?", err.Error())
		// LimitReader hands out at most MaxBytes+1 bytes; the reader may
		// have been asked for a buffer's worth more.
		assert.LessOrEqual(t, r.n, DefaultMaxBytes+64<<10)
		var errs LoadErrors
		require.True(t, errors.As(err, &errs))
	})
	t.Run("a read error", func(t *testing.T) {
		_, err := LoadReader(failingReader{strings.NewReader("apiVersion: ")}, "")
		assert.Equal(t, "<input>: cannot read: connection reset", err.Error())
		var errs LoadErrors
		require.True(t, errors.As(err, &errs))
	})
}

func TestLoadErrorFormat(t *testing.T) {
	tests := []struct {
		name string
		err  LoadError
		want string
	}{
		{"message only", LoadError{Source: "k.yaml", Message: "m"}, "k.yaml: m"},
		{"no source", LoadError{Message: "m"}, "<input>: m"},
		{"field", LoadError{Source: "k.yaml", Field: "spec.x", Message: "m"}, "k.yaml: spec.x: m"},
		{"line", LoadError{Source: "k.yaml", Line: 3, Message: "m"}, "k.yaml:3: m"},
		{"single document", LoadError{Source: "k.yaml", Document: 1, Field: "spec.x", Line: 3, Message: "m"}, "k.yaml:3: spec.x: m"},
		{"multi-document", LoadError{Source: "k.yaml", Document: 2, MultiDoc: true, Field: "spec.x", Line: 3, Message: "m"}, "k.yaml:3: document 2: spec.x: m"},
		{"multi-document without field", LoadError{Source: "k.yaml", Document: 2, MultiDoc: true, Message: "m"}, "k.yaml: document 2: m"},
		{"outside any document", LoadError{Source: "k.yaml", MultiDoc: true, Message: "m"}, "k.yaml: m"},
		{"line breaks are escaped", LoadError{Source: "k.yaml", Message: "a\nb\r\nc"}, `k.yaml: a\nb\r\nc`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.err.Error())
		})
	}
	errs := LoadErrors{&tests[0].err, &tests[5].err}
	assert.Equal(t, "k.yaml: m\nk.yaml:3: document 2: spec.x: m", errs.Error())
	var target *LoadError
	require.True(t, errors.As(error(errs), &target))
	assert.Equal(t, "m", target.Message)
}

func TestFieldPathString(t *testing.T) {
	p := fieldPath{}.child("spec").child("structureDefinition").child("childComponents").at(1).child("ownerRef")
	assert.Equal(t, "spec.structureDefinition.childComponents[1].ownerRef", p.String())
	assert.Equal(t, `metadata.labels["a.b/c"]`, fieldPath{}.child("metadata").child("labels").child("a.b/c").String())
	assert.Equal(t, `[""][0]`, fieldPath{}.child("").at(0).String())
	assert.Equal(t, `["a b"].x-y_z`, fieldPath{}.child("a b").child("x-y_z").String())
}

func TestRecoverLibrary(t *testing.T) {
	err := func() (err error) {
		defer recoverLibrary(&err)
		panic("internal error")
	}()
	var lp *libraryPanic
	require.True(t, errors.As(err, &lp))
	assert.Equal(t, "the YAML library failed on this input (internal error); please report it", parseError(err, 64).Message)
	assert.Equal(t, lp.Error(), decodeErrors(err)[0].Message)
}
