package builtin_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/internal/jqvalue"
	"github.com/kartalua/karta/internal/third_party/gojq"
	"github.com/kartalua/karta/karta"
)

// Expressions of the built-ins rewritten to compute less on every call
// (docs/performance.md, "What placement builds") answer as their former text did:
// the same outputs, or the same error, on the examples' shapes and on
// odd ones. gojq, the oracle every back end and export is held to, runs
// both. AppWrapper's podSets: every shape of path the split tells apart
// (no "[", an index, an empty key, an unclosed or doubled bracket, a path
// that is not a string) and every kind of name, under each of the three
// expressions that derive them; Argo Workflow's pod instance id, on pods
// of every naming and every ARGO_TEMPLATE.

// appWrapperRewrites are the parts of AppWrapper's podSet derivation
// rewritten, their former text and today's: the podSet path split again
// at "[" only when some key has a "[" or is empty (it built an array per
// key on every call), the wrapped object's name picked from the names it
// could have without building their array and its filtered copy,
// RayJob's and RayCluster's prefix and cluster spec picked by one if, a
// JobSet's replicated jobs and a RayCluster's worker groups read under
// their bound key, and (podTemplateSpecPath's alone) the template
// followed one key at a time under $s and its length $n rather than by a
// branch per depth repeating the reads of the one before, its refusal
// naming the path with + (a string there: it was split).
var appWrapperRewrites = []struct {
	before, after string
	followOnly    bool // podTemplateSpecPath's alone
}{
	{`s: [.p.path | split(".")[] | split("[") | .[0], (.[1:][] | rtrimstr("]") | tonumber)]}`,
		`s: (.p.path | split(".") | if ([.[] | select(. == "" or (split("[") | .[0]) != .)] | length) > 0 then map(split("[") | .[0], (.[1:][] | rtrimstr("]") | tonumber)) else . end)}`, false},
	{`n: ([.r.status.componentStatus[.i].name, .r.spec.components[.i].template.metadata.name]
       | map(select(. != null and . != "")) | first),`,
		`n: [(.r.status.componentStatus[.i].name, .r.spec.components[.i].template.metadata.name)
       | select(. != null and . != "")][0],`, false},
	// A JobSet's replicated jobs and a RayCluster's worker groups read
	// under their key bound ($i), not through objects built to carry it.
	{`[{j: (.t.spec.replicatedJobs // [])} | {j: .j, i: (.j | keys[])} | {i: .i, v: .j[.i]}
            | select(.v.template != null)
            | {path: ("template.spec.replicatedJobs[" + (.i | tostring) + "].template.spec.template"),
               replicas: ((.v.replicas // 1) * ([.v.template.spec.parallelism // 1,
                 .v.template.spec.completions // (.v.template.spec.parallelism // 1)] | min))}]`,
		`[.t.spec.replicatedJobs // [] | keys[] as $i | .[$i]
            | select(.template != null)
            | {path: ("template.spec.replicatedJobs[" + ($i | tostring) + "].template.spec.template"),
               replicas: ((.replicas // 1) * ([.template.spec.parallelism // 1,
                 .template.spec.completions // (.template.spec.parallelism // 1)] | min))}]`, false},
	{`+ [{p: .p, w: (.c.workerGroupSpecs // [])} | {p: .p, w: .w, i: (.w | keys[])} | {p: .p, i: .i, v: .w[.i]}
                 | select(.v.template != null)
                 | {path: ("template.spec." + .p + "workerGroupSpecs[" + (.i | tostring) + "].template"),
                    replicas: (.v.replicas // 1)}]`,
		`+ [.p as $p | .c.workerGroupSpecs // [] | keys[] as $i | .[$i]
                 | select(.template != null)
                 | {path: ("template.spec." + $p + "workerGroupSpecs[" + ($i | tostring) + "].template"),
                    replicas: (.replicas // 1)}]`, false},
	// RayJob's and RayCluster's prefix and cluster spec in one if.
	{`{p: (if .k == "ray.io/v1/RayJob" then "rayClusterSpec." else "" end),
             c: (if .k == "ray.io/v1/RayJob" then .t.spec.rayClusterSpec else .t.spec end)}`,
		`(if .k == "ray.io/v1/RayJob" then {p: "rayClusterSpec.", c: .t.spec.rayClusterSpec} else {p: "", c: .t.spec} end)`, false},
	{"\n  | if (.s | length) == 1 then .c.template\n  elif (.s | length) == 2 then .c.template[.s[1]]\n  elif (.s | length) == 3 then .c.template[.s[1]][.s[2]]\n  elif (.s | length) == 4 then .c.template[.s[1]][.s[2]][.s[3]]\n  elif (.s | length) == 5 then .c.template[.s[1]][.s[2]][.s[3]][.s[4]]\n  elif (.s | length) == 6 then .c.template[.s[1]][.s[2]][.s[3]][.s[4]][.s[5]]\n  elif (.s | length) == 7 then .c.template[.s[1]][.s[2]][.s[3]][.s[4]][.s[5]][.s[6]]\n  elif (.s | length) == 8 then .c.template[.s[1]][.s[2]][.s[3]][.s[4]][.s[5]][.s[6]][.s[7]]\n  elif (.s | length) == 9 then .c.template[.s[1]][.s[2]][.s[3]][.s[4]][.s[5]][.s[6]][.s[7]][.s[8]]\n  elif (.s | length) == 10 then .c.template[.s[1]][.s[2]][.s[3]][.s[4]][.s[5]][.s[6]][.s[7]][.s[8]][.s[9]]\n  else error(\"podSet path \\(.p.path) is deeper than this Karta follows\") end",
		" | .s as $s | ($s | length) as $n | if $n == 0 or $n > 10 then error(\"podSet path \" + .p.path + \" is deeper than this Karta follows\")\n  else .c.template\n    | if $n > 1 then .[$s[1]] else . end\n    | if $n > 2 then .[$s[2]] else . end\n    | if $n > 3 then .[$s[3]] else . end\n    | if $n > 4 then .[$s[4]] else . end\n    | if $n > 5 then .[$s[5]] else . end\n    | if $n > 6 then .[$s[6]] else . end\n    | if $n > 7 then .[$s[7]] else . end\n    | if $n > 8 then .[$s[8]] else . end\n    | if $n > 9 then .[$s[9]] else . end end", true},
}

// workflowIDBefore is Argo Workflow's pod instance idPath as it was: the
// candidates' array built, then filtered into another.
const workflowIDBefore = `[(if .metadata.name == .metadata.labels["workflows.argoproj.io/workflow"] then ""
  else (.metadata | .name[(.labels["workflows.argoproj.io/workflow"] | length) + 1:] | split("-") | .[:-1] | join("-")) end),
 ((.spec.initContainers[]?, .spec.containers[]?) | .env[]? | select(.name == "ARGO_TEMPLATE") | .value | ltrimstr("{\"name\":\"") | split("\"") | .[0])]
| map(select(. != null and . != "")) | first`

func TestRewrittenPathsAnswerAsBefore(t *testing.T) {
	aw := builtinKarta(t, "appwrapper")
	podset := aw.Spec.StructureDefinition.ChildComponents[0]

	// A podSet path of every shape the split tells apart.
	paths := []string{`"template"`, `"template.spec.template"`, `"template.spec.pytorchReplicaSpecs.Worker.template"`,
		`"template.spec.replicatedJobs[1].template.spec.template"`, `"template.spec.workerGroupSpecs[0].template"`,
		`"template.spec..template"`, `""`, `"."`, `"template[x]"`, `"a[0]b"`, `"a]"`, `"a[[1]]"`, `"[0]"`,
		`null`, `3`, `["template"]`, `"template.spec.template.spec.x.y.z.w.v.u"`, `"template.spec.template.spec.x.y.z.w.v.u.t"`,
		`"template.spec.template.spec.containers[0].name"`, `"template.spec.template[0]"`, `"template.spec.replicatedJobs[1].template.spec.template.x"`}
	var awObjects []string
	for _, p := range paths {
		awObjects = append(awObjects, `{"spec": {"components": [{"template": {"metadata": {"name": "w"},
			"spec": {"template": {"spec": {}}, "replicatedJobs": [{"name": "a"}, {"name": "b", "template": {"spec": {"template": {}}}}],
			"pytorchReplicaSpecs": {"Worker": {"template": {}}}, "workerGroupSpecs": [{"groupName": "g", "template": {}}]}},
			"podSets": [{"path": `+p+`, "replicas": 2}]}]}}`)
	}
	// The wrapped object's name: the status' when it is neither null nor
	// "", else the template's; a false or a number passes; a status or a
	// template of the wrong type fails.
	for _, names := range []struct{ status, template string }{
		{`"s"`, `"t"`}, {`""`, `"t"`}, {`null`, `"t"`}, {`""`, `""`}, {`null`, `null`}, {`false`, `"t"`}, {`3`, `"t"`}, {`"s"`, `{}`},
	} {
		awObjects = append(awObjects, `{"spec": {"components": [{"template": {"metadata": {"name": `+names.template+`}, "spec": {"template": {}}},
			"podSets": [{"path": "template.spec.template"}]}]},
			"status": {"componentStatus": [{"name": `+names.status+`, "podSets": [{"path": "template.spec.template"}]}]}}`)
	}
	awObjects = append(awObjects, `{"spec": {"components": [{"template": "x"}]}, "status": {"componentStatus": [{"name": "s", "podSets": []}]}}`,
		`{"spec": {"components": [{"template": {}}]}, "status": {"componentStatus": "x"}}`,
		`{"spec": {"components": [{"template": {"metadata": "m"}}]}, "status": {"componentStatus": [{"name": "s", "podSets": [{"path": "template"}]}]}}`)
	// A template whose spec is a string or an array: each depth, out of
	// it, an index of the wrong type.
	for _, spec := range []string{`"x"`, `[1, {"a": 2}]`} {
		for _, p := range []string{`"template"`, `"template.spec"`, `"template.spec.template"`, `"template.spec[1]"`,
			`"template.spec[1].a"`, `"template.spec[1].a.b"`, `""`, `"a.b.c.d.e.f.g.h.i.j.k"`} {
			awObjects = append(awObjects, `{"spec": {"components": [{"template": {"metadata": {"name": "w"}, "spec": `+spec+`},
				"podSets": [{"path": `+p+`}]}]}}`)
		}
	}
	// Every kind whose podSets the controller infers, each with its
	// counts given, left out, of the wrong type, and its lists empty, of
	// the wrong type or with an entry without a template.
	kinds := map[string]string{"batch/v1 Job": "", "jobset.x-k8s.io/v1alpha2 JobSet": "replicatedJobs",
		"kubeflow.org/v1 PyTorchJob": "", "ray.io/v1 RayCluster": "workerGroupSpecs", "ray.io/v1 RayJob": "workerGroupSpecs",
		"v1 Pod": "", "apps/v1 Deployment": "", "apps/v1 StatefulSet": ""}
	for kind, list := range kinds {
		apiVersion, k, _ := strings.Cut(kind, " ")
		item := func(counts string) string {
			return `{"name": "a", "groupName": "g", "replicas": 2, "template": {"spec": {"parallelism": 3` + counts + `}}}`
		}
		specs := []string{`{}`, `"x"`, `{"parallelism": 3}`, `{"parallelism": 4, "completions": 2, "replicas": 3}`, `{"parallelism": "4", "completions": 2}`,
			`{"completions": 5}`, `{"parallelism": 0, "completions": 0}`, `{"replicas": "2"}`,
			`{"pytorchReplicaSpecs": {"Master": {"template": {}}, "Worker": {"replicas": 4, "template": {}}}}`,
			`{"pytorchReplicaSpecs": {"Worker": {"replicas": "4", "template": {}}}}`, `{"pytorchReplicaSpecs": "x"}`,
			`{"pytorchReplicaSpecs": [1]}`, `{"rayClusterSpec": "x"}`,
			`{"rayClusterSpec": {"headGroupSpec": {}, "workerGroupSpecs": [` + item("") + `]}}`}
		if list != "" {
			for _, l := range []string{`[]`, `"x"`, `{"b": ` + item("") + `}`, `[{"name": "n"}, ` + item(`, "completions": 1`) + `]`,
				`[` + item(`, "completions": "1"`) + `]`, `[{"replicas": "2", "template": {"spec": "x"}}]`,
				`[{"template": {"spec": {"completions": 2}}}, {"template": null}, {"template": {}}]`} {
				specs = append(specs, `{"`+list+`": `+l+`}`)
			}
		}
		for _, spec := range specs {
			awObjects = append(awObjects, `{"spec": {"components": [{"template": {"apiVersion": "`+apiVersion+`", "kind": "`+k+`",
				"metadata": {"name": "w"}, "spec": `+spec+`}}]}}`)
		}
	}
	// Several components, in a list and in an object.
	job := `{"template": {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"parallelism": 2}}}`
	deploy := `{"template": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": 5}}}`
	awObjects = append(awObjects, `{"spec": {"components": [`+job+`, `+deploy+`]}}`, `{"spec": {"components": {"b": `+job+`, "a": `+deploy+`}}}`,
		`{"spec": {"components": [`+job+`, `+deploy+`]}, "status": {"componentStatus": [{"name": "s"}, {"podSets": [{"path": "template"}]}]}}`)
	awObjects = append(awObjects, `{}`, `{"spec": {"components": []}}`, `{"spec": {"components": "x"}}`,
		`{"spec": {"components": [{"template": {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {}}}}]}}`)

	tests := []struct {
		name    string
		after   string
		objects []string
	}{
		{"appwrapper instanceIdPath", podset.InstanceIDPath, awObjects},
		{"appwrapper podTemplateSpecPath", podset.SpecDefinition.PodTemplateSpecPath, awObjects},
		{"appwrapper replicasPath", podset.ScaleDefinition.ReplicasPath, awObjects},
	}
	wf := builtinKarta(t, "workflow")
	step := wf.Spec.StructureDefinition.ChildComponents[0]
	// Pods named as the workflow, by v2 names, with and without
	// ARGO_TEMPLATE (in an init container, several, empty, not JSON, not a
	// string), and of the wrong types.
	env := func(v string) string { return `{"env": [{"name": "ARGO_TEMPLATE", "value": ` + v + `}]}` }
	var pods []string
	for _, meta := range []string{`{"name": "wf", "labels": {"workflows.argoproj.io/workflow": "wf"}}`,
		`{"name": "wf-train-step-123", "labels": {"workflows.argoproj.io/workflow": "wf"}}`,
		`{"name": "wf-123", "labels": {"workflows.argoproj.io/workflow": "wf"}}`, `{"name": "wf-1", "labels": {}}`,
		`{"name": 7, "labels": {"workflows.argoproj.io/workflow": "wf"}}`, `{}`} {
		for _, spec := range []string{`{}`, `{"containers": [` + env(`"{\"name\":\"train\",\"x\":1}"`) + `]}`,
			`{"initContainers": [` + env(`"{\"name\":\"init\"}"`) + `], "containers": [` + env(`"{\"name\":\"main\"}"`) + `]}`,
			`{"containers": [` + env(`""`) + `, ` + env(`"plain"`) + `]}`, `{"containers": [` + env(`3`) + `]}`,
			`{"containers": [` + env(`null`) + `]}`, `{"containers": "x"}`} {
			pods = append(pods, `{"metadata": `+meta+`, "spec": `+spec+`}`)
		}
	}
	tests = append(tests, struct {
		name    string
		after   string
		objects []string
	}{"workflow idPath", step.PodSelector.ComponentInstanceSelector.IDPath, pods})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := workflowIDBefore
			if tt.name != "workflow idPath" {
				before = tt.after
				for _, rw := range appWrapperRewrites {
					if rw.followOnly && tt.name != "appwrapper podTemplateSpecPath" {
						continue
					}
					require.Contains(t, tt.after, rw.after)
					before = strings.ReplaceAll(before, rw.after, rw.before)
				}
			}
			require.NotEqual(t, before, tt.after)
			for _, text := range tt.objects {
				var obj any
				require.NoError(t, yaml.Unmarshal([]byte(text), &obj), text)
				wantOuts, wantErr := runGojq(t, before, obj)
				gotOuts, gotErr := runGojq(t, tt.after, obj)
				assert.Equal(t, wantErr, gotErr, "error on %s", text)
				assert.Equal(t, wantOuts, gotOuts, "outputs on %s", text)
			}
		})
	}

	// PodCliqueSet's paths bind the clique, its name and the scaling
	// group with `as` where they paired them with the template in
	// objects: the same outputs and errors on every shape of template.
	pcs := builtinKarta(t, "podcliqueset")
	clique := pcs.Spec.StructureDefinition.ChildComponents[0]
	scaled := pcs.Spec.Instructions.GangScheduling.PodGroups[0]
	require.Equal(t, "scaled", scaled.Name)
	for _, rw := range []struct{ name, before, after string }{
		{"podcliqueset replicasPath", podCliqueSetReplicasBefore, clique.ScaleDefinition.ReplicasPath},
		{"podcliqueset minReplicasPath", podCliqueSetMinReplicasBefore, clique.ScaleDefinition.MinReplicasPath},
		{"podcliqueset scaled minMemberPath", podCliqueSetScaledMinBefore, scaled.MinMemberPath},
	} {
		t.Run(rw.name, func(t *testing.T) {
			require.NotEqual(t, rw.before, rw.after)
			for _, template := range podCliqueSetTemplates {
				var obj any
				text := `{"spec": {"template": ` + template + `}}`
				require.NoError(t, yaml.Unmarshal([]byte(text), &obj), text)
				wantOuts, wantErr := runGojq(t, rw.before, obj)
				gotOuts, gotErr := runGojq(t, rw.after, obj)
				assert.Equal(t, wantErr, gotErr, "error on %s", text)
				assert.Equal(t, wantOuts, gotOuts, "outputs on %s", text)
			}
		})
	}
}

// PodCliqueSet's clique replicas, minReplicas and scaled gang minimum as
// they were, each clique paired with the template in an object.
const (
	podCliqueSetReplicasBefore = `.spec.template | {t: ., c: .cliques[]?}
  | (.c.spec.replicas // 1)
  * ([{n: .c.name, g: .t.podCliqueScalingGroups[]?}
      | select((.g.cliqueNames - [.n] | length) < (.g.cliqueNames | length))
      | .g.replicas // 1][0] // 1)`
	podCliqueSetMinReplicasBefore = `.spec.template | {t: ., c: .cliques[]?}
  | (.c.spec.minAvailable // .c.spec.replicas // 1)
  * ([{n: .c.name, g: .t.podCliqueScalingGroups[]?}
      | select((.g.cliqueNames - [.n] | length) < (.g.cliqueNames | length))
      | .g.minAvailable // 1][0] // 1)`
	podCliqueSetScaledMinBefore = `[.spec.template | {t: ., g: .podCliqueScalingGroups[]?}
   | [{g: .g, c: .t.cliques[]?}
      | select((.g.cliqueNames - [.c.name] | length) < (.g.cliqueNames | length))
      | .c.spec.minAvailable // .c.spec.replicas // 1] | add] | min`
)

// podCliqueSetTemplates are .spec.template of every shape the paths tell
// apart: standalone and scaling-group cliques, defaults, a clique in two
// groups, and cliques, names, groups and cliqueNames of the wrong types.
var podCliqueSetTemplates = []string{
	`{"cliques": [{"name": "a", "spec": {"replicas": 2, "minAvailable": 1}}, {"name": "b", "spec": {"replicas": 3}}],
	  "podCliqueScalingGroups": [{"name": "g", "cliqueNames": ["b"], "replicas": 4, "minAvailable": 2}]}`,
	`{"cliques": [{"name": "a", "spec": {}}, {"name": "b"}, {"name": "c", "spec": {"replicas": 5}}],
	  "podCliqueScalingGroups": [{"cliqueNames": ["a", "c"]}, {"cliqueNames": ["c"], "replicas": 7, "minAvailable": 3}]}`,
	`{"cliques": [{"name": "a", "spec": {"replicas": 2}}]}`,
	`{"cliques": [], "podCliqueScalingGroups": [{"cliqueNames": ["a"]}]}`,
	`{"podCliqueScalingGroups": [{"cliqueNames": ["a"], "replicas": 2}]}`,
	`{"cliques": [{"name": "a"}], "podCliqueScalingGroups": []}`,
	`{"cliques": "x", "podCliqueScalingGroups": [{"cliqueNames": ["a"]}]}`,
	`{"cliques": [{"name": "a"}], "podCliqueScalingGroups": "x"}`,
	`{"cliques": ["a"], "podCliqueScalingGroups": [{"cliqueNames": ["a"]}]}`,
	`{"cliques": ["a"]}`,
	`{"cliques": [null, {"name": null}], "podCliqueScalingGroups": [{"cliqueNames": [null]}]}`,
	`{"cliques": [{"name": "a"}], "podCliqueScalingGroups": [3]}`,
	`{"cliques": [{"name": "a"}], "podCliqueScalingGroups": [null, {"cliqueNames": "a"}]}`,
	`{"cliques": [{"name": "a"}], "podCliqueScalingGroups": [{"cliqueNames": ["a"]}, {"cliqueNames": 1}]}`,
	`{"cliques": [{"name": "a", "spec": "s"}], "podCliqueScalingGroups": [{"cliqueNames": ["a"], "replicas": "r"}]}`,
	`{"cliques": [{"name": "a", "spec": {"replicas": "2"}}], "podCliqueScalingGroups": [{"cliqueNames": ["a"], "replicas": 2}]}`,
	`{"cliques": [{"name": "a", "spec": {"replicas": 0, "minAvailable": false}}], "podCliqueScalingGroups": [{"cliqueNames": ["a"], "replicas": false, "minAvailable": null}]}`,
	`{"cliques": {"x": {"name": "a"}}, "podCliqueScalingGroups": {"y": {"cliqueNames": ["a"]}}}`,
	`{}`, `null`, `"t"`, `[1]`, `3`,
}

// builtinKarta is the named built-in's Karta.
func builtinKarta(t *testing.T, name string) *karta.Karta {
	t.Helper()
	b, ok, err := builtin.Get(name)
	require.NoError(t, err)
	require.True(t, ok, name)
	return b.Karta
}

// runGojq is expr's outputs on in up to its first error, and that error's
// text ("" for none).
func runGojq(t *testing.T, expr string, in any) ([]any, string) {
	t.Helper()
	q, err := gojq.Parse(expr)
	require.NoError(t, err, expr)
	code, err := gojq.Compile(q)
	require.NoError(t, err, expr)
	var outs []any
	it := code.Run(jqvalue.Input(in))
	for {
		v, ok := it.Next()
		if !ok {
			return outs, ""
		}
		if err, isErr := v.(error); isErr {
			return outs, err.Error()
		}
		outs = append(outs, v)
	}
}
