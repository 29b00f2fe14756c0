package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/object"
)

// Hostile inputs through the command line (issue 6): whatever the files
// hold, karta answers with a result, or exits 1 with one line per problem
// on standard error naming the file; never a Go stack trace.

const (
	jobsetObject = "../../examples/jobset/running.yaml"
	jobsetPods   = "../../examples/jobset/pods.yaml"
	jobsetRevs   = "../../examples/jobset/revisions.yaml"
)

// writeFile writes data to a file in dir and returns its path.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

// nested returns depth levels of JSON arrays and objects, alternating,
// around 1.
func nested(depth int) string {
	var b strings.Builder
	for i := range depth {
		if i%2 == 0 {
			b.WriteString(`{"a":`)
		} else {
			b.WriteString("[")
		}
	}
	b.WriteString("1")
	for i := depth - 1; i >= 0; i-- {
		if i%2 == 0 {
			b.WriteString("}")
		} else {
			b.WriteString("]")
		}
	}
	return b.String()
}

// jobsetWith returns the JobSet example as JSON with edit applied.
func jobsetWith(t *testing.T, edit func(obj map[string]any)) []byte {
	t.Helper()
	data, err := os.ReadFile(jobsetObject)
	require.NoError(t, err)
	docs, err := object.Decode(data, jobsetObject)
	require.NoError(t, err)
	obj := docs[0].Object
	edit(obj)
	out, err := json.Marshal(obj)
	require.NoError(t, err)
	return out
}

// replicatedJob returns the JobSet's replicated job i.
func replicatedJob(obj map[string]any, i int) map[string]any {
	return obj["spec"].(map[string]any)["replicatedJobs"].([]any)[i].(map[string]any)
}

// assertOneLineErrors checks that a failed command printed only errors,
// one line each, every one naming where.
func assertOneLineErrors(t *testing.T, stderr, where string, lines int) {
	t.Helper()
	assert.NotContains(t, stderr, "goroutine ", "no Go stack traces, ever")
	assert.NotContains(t, stderr, "panic")
	got := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	assert.Len(t, got, lines, "one line per problem: %q", stderr)
	for _, line := range got {
		assert.True(t, strings.HasPrefix(line, where), "%q names %s", line, where)
		assert.Less(t, len(line), 2000, "a readable line")
	}
}

func TestHostileObjectFiles(t *testing.T) {
	dir := t.TempDir()
	laughs := "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: lol}\na: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		laughs += fmt.Sprintf("%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n", n, n, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = n
	}
	laughs += "spec: *i\n"
	head := `{"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet","metadata":{"name":"x"},"spec":`

	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"deep-10000.json", []byte(head + nested(10_000) + "}"), "exceeded max depth"},
		{"deep-500.json", []byte(head + nested(500) + "}"), "nesting deeper than 200 levels"},
		{"laughs.yaml", []byte(laughs), "aliases expand to too many values"},
		{"self-alias.yaml", []byte("apiVersion: v1\nkind: JobSet\nspec: &s {a: *s, b: *s}\n"), "deeper than 200 levels"},
		{"non-utf8.yaml", []byte("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: \xff\xfe}\n"), "not valid UTF-8 (byte offset 67)"},
		{"fractional-replicas.json", jobsetWith(t, func(o map[string]any) { replicatedJob(o, 0)["replicas"] = 2.5 }),
			`karta "jobset": GetPodSpecs: component "replicatedjob" instance "driver": replicasPath .spec.replicatedJobs[]? | (.replicas // 1) * (if .template.spec.completions != null and .template.spec.completions < (.template.spec.parallelism // 1) then .template.spec.completions else (.template.spec.parallelism // 1) end): 2.5 is not an integer`},
		{"huge-replicas.json", jobsetWith(t, func(o map[string]any) { replicatedJob(o, 1)["replicas"] = json.Number("1e300") }),
			`component "replicatedjob" instance "workers": replicasPath`},
		{"nan-replicas.json", jobsetWith(t, func(o map[string]any) { replicatedJob(o, 1)["replicas"] = "NaN" }),
			// jq repeats a string times a number: "NaN" * 4.
			`string "NaNNaNNaNNaN" is not a decimal integer`},
		{"replicas-2^31.json", jobsetWith(t, func(o map[string]any) {
			replicatedJob(o, 0)["replicas"] = json.Number("2147483648")
		}), "is out of range 0…2147483647"},
		{"wrong-type-spec.json", jobsetWith(t, func(o map[string]any) { o["spec"] = "all of them" }),
			`karta "jobset": GetPodSpecs: component "replicatedjob": instanceIdPath: jq .spec.replicatedJobs[]?.name: expected an object but got: string ("all of them")`},
		{"wrong-type-template.json", jobsetWith(t, func(o map[string]any) {
			replicatedJob(o, 0)["template"].(map[string]any)["spec"].(map[string]any)["template"] = []any{"x"}
		}), `component "replicatedjob" instance "driver": podTemplateSpecPath must yield an object, got an array`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFile(t, dir, tc.name, tc.data)
			stdout, stderr, code := runCLI(t, "", "pods", "-o", "json", "-f", file)
			assert.Equal(t, exitInvalid, code, stderr)
			assert.Empty(t, stdout, "nothing on standard output when the command fails")
			assertOneLineErrors(t, stderr, file, 1)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// TestLargeObjectFile revises a JobSet of over 10 MB (a long annotation,
// a long label on each pod template, and 1 000 containers) and prints it
// whole. It is a valid object, so the command succeeds. (Every hook runs
// on large objects in the interpreter's tests: here one command parses
// and renders 10 MB, which takes seconds under -race. The 64 MiB input
// limit is object's test: reading that much here takes seconds too.)
func TestLargeObjectFile(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", 14<<18)
	big := jobsetWith(t, func(o map[string]any) {
		o["metadata"].(map[string]any)["annotations"] = map[string]any{"big": long}
		for i := range 2 {
			tmpl := replicatedJob(o, i)["template"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)
			tmpl["metadata"].(map[string]any)["labels"].(map[string]any)["big"] = long
		}
		spec := replicatedJob(o, 0)["template"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		containers := spec["containers"].([]any)
		for i := range 1_000 {
			containers = append(containers, map[string]any{"name": fmt.Sprintf("sidecar-%d", i), "image": "registry.example.com/tools/sidecar:v1.2.3", "args": []any{strings.Repeat("a", 100)}})
		}
		spec["containers"] = containers
	})
	require.Greater(t, len(big), 10<<20)
	file := writeFile(t, dir, "big.json", big)

	stdout, stderr, code := runCLI(t, "", "revise", "-o", "json", "-f", file, "-r", jobsetRevs)
	require.Equal(t, exitOK, code, stderr)
	var revised map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &revised))
	assert.Equal(t, long, revised["metadata"].(map[string]any)["annotations"].(map[string]any)["big"])
	assert.Equal(t, "kai-scheduler", replicatedJob(revised, 1)["template"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["schedulerName"], "the revision applied")
}

// TestHostilePodFiles: pods without labels, without names, and with the
// same namespace/name twice. Every pod appears exactly once, placed or
// unmatched (docs/cli.md `karta gang`).
func TestHostilePodFiles(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(jobsetPods)
	require.NoError(t, err)
	docs, err := object.Decode(data, jobsetPods)
	require.NoError(t, err)
	pods := object.Items(docs)
	require.NotEmpty(t, pods)

	edits := map[string]func(i int, pod map[string]any){
		"no-labels":       func(_ int, pod map[string]any) { delete(pod["metadata"].(map[string]any), "labels") },
		"no-metadata":     func(_ int, pod map[string]any) { delete(pod, "metadata") },
		"duplicate-names": func(_ int, pod map[string]any) { pod["metadata"].(map[string]any)["name"] = "same" },
		"labels-wrong-types": func(i int, pod map[string]any) {
			labels, _ := pod["metadata"].(map[string]any)["labels"].(map[string]any)
			for k := range labels {
				labels[k] = []any{1.5, nil, true, map[string]any{}}[(i+len(k))%4]
			}
		},
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			items := make([]any, len(pods))
			for i, pod := range pods {
				var cp map[string]any
				b, err := json.Marshal(pod)
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(b, &cp))
				edit(i, cp)
				items[i] = cp
			}
			list, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
			require.NoError(t, err)
			file := writeFile(t, dir, name+".json", list)
			stdout, stderr, code := runCLI(t, "", "gang", "-o", "json", "-f", jobsetObject, "--pods", file)
			require.Equal(t, exitOK, code, stderr)
			var res struct {
				Groups []struct {
					Pods []string `json:"pods"`
				} `json:"groups"`
				Placements []struct {
					Pod string `json:"pod"`
				} `json:"placements"`
				Unmatched []struct {
					Pod    string `json:"pod"`
					Reason string `json:"reason"`
				} `json:"unmatched"`
			}
			require.NoError(t, json.Unmarshal([]byte(stdout), &res))
			assert.Equal(t, len(pods), len(res.Placements)+len(res.Unmatched), "every pod exactly once")
			grouped := 0
			for _, g := range res.Groups {
				grouped += len(g.Pods)
			}
			assert.Equal(t, len(res.Placements), grouped, "each placed pod in one group")
			for _, u := range res.Unmatched {
				assert.NotEmpty(t, u.Reason)
			}
			if name == "no-labels" || name == "no-metadata" {
				assert.Empty(t, res.Placements, "nothing matches a pod without labels")
			}
		})
	}
}

// TestHostileRevisionFiles: revisions nested too deep, or of the wrong
// shape, are one error line naming the file.
func TestHostileRevisionFiles(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, data, want string
	}{
		{"deep.json", `[{"component":"replicatedjob","instance":"*","patch":` + nested(10_000) + `}]`, "exceeded max depth"},
		{"deeper-than-200.json", `[{"component":"replicatedjob","instance":"*","patch":{"metadata":` + nested(300) + `}}]`, "nesting deeper than 200 levels"},
		{"not-a-list.json", `{"component":"replicatedjob"}`, "revisions must be a list"},
		{"patch-number.json", `[{"component":"replicatedjob","instance":"*","patch":1e300}]`, "revisions[0].patch must be an object"},
		{"non-utf8.yaml", "- component: \xff\n", "not valid UTF-8"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFile(t, dir, tc.name, []byte(tc.data))
			stdout, stderr, code := runCLI(t, "", "revise", "-o", "patch", "-f", jobsetObject, "-r", file)
			assert.Equal(t, exitInvalid, code, stderr)
			assert.Empty(t, stdout)
			assertOneLineErrors(t, stderr, file, 1)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// TestHostileKartaFiles: validate refuses a Karta nested too deep, or with
// aliases that expand without end, in one line.
func TestHostileKartaFiles(t *testing.T) {
	dir := t.TempDir()
	laughs := "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata: {name: lol}\na: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		laughs += fmt.Sprintf("%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n", n, n, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = n
	}
	laughs += "spec: *i\n"
	for name, data := range map[string]string{
		"deep.json":   `{"apiVersion":"run.ai/v1alpha1","kind":"Karta","metadata":{"name":"x"},"spec":` + nested(10_000) + `}`,
		"laughs.yaml": laughs,
	} {
		t.Run(name, func(t *testing.T) {
			file := writeFile(t, dir, name, []byte(data))
			_, stderr, code := runCLI(t, "", "validate", file)
			assert.Equal(t, exitInvalid, code, stderr)
			assertOneLineErrors(t, stderr, file, 1)
		})
	}
}
