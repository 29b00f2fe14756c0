package podgroups_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/object"
	"github.com/kartalua/karta/podgroups"
)

var update = flag.Bool("update", false, "rewrite the golden files of the podgroups tests")

// example is a workload in a running state with its pods.
type example struct {
	name string
	p    *interpreter.Program
	obj  *unstructured.Unstructured
	pods []*unstructured.Unstructured
	// refs are the objects the Karta's references read (none: absent).
	refs []*unstructured.Unstructured
}

// ctx is the context the example's hooks run with: its refs resolved.
func (ex example) ctx() context.Context {
	if len(ex.refs) == 0 {
		return context.Background()
	}
	return interpreter.WithResolver(context.Background(), interpreter.NewStaticResolver(ex.refs...), nil)
}

// examples are every built-in with gang instructions that ships
// examples/NAME/running.yaml and pods.yaml, and the made-up TrainJob of
// examples/kartas/trainjob.yaml (a v2 group with subgroups and a topology),
// as tutorial-trainjob, and the built-in trainjob reading its runtime
// (examples/trainjob/torch-running.yaml with refs/torch-distributed.yaml),
// as trainjob-runtime, and the volcano-job built-in on a task with a
// partitionPolicy (examples/volcano-job/partitioned.yaml), as
// volcano-job-partitioned.
func examples(t *testing.T) []example {
	t.Helper()
	var out []example
	for _, name := range builtin.Names() {
		dir := filepath.Join("..", "examples", name)
		if !exists(filepath.Join(dir, "running.yaml")) || !exists(filepath.Join(dir, "pods.yaml")) {
			continue
		}
		b, ok, err := builtin.Get(name)
		require.NoError(t, err)
		require.True(t, ok)
		if !podgroups.HasGangInstructions(b.Karta) {
			continue
		}
		p, err := b.Compile(interpreter.Options{})
		require.NoError(t, err)
		out = append(out, example{name: name, p: p, obj: loadOne(t, filepath.Join(dir, "running.yaml")), pods: loadAll(t, filepath.Join(dir, "pods.yaml"))})
	}
	require.GreaterOrEqual(t, len(out), 12, "the built-ins' examples were found")
	ks, err := karta.LoadFile("../examples/kartas/trainjob.yaml")
	require.NoError(t, err)
	p, err := interpreter.Compile(ks[0], interpreter.Options{})
	require.NoError(t, err)
	out = append(out, example{name: "tutorial-trainjob", p: p, obj: loadOne(t, "../examples/tutorial-trainjob/running.yaml"), pods: loadAll(t, "../examples/tutorial-trainjob/pods.yaml")})
	b, ok, err := builtin.Get("trainjob")
	require.NoError(t, err)
	require.True(t, ok)
	tp, err := b.Compile(interpreter.Options{})
	require.NoError(t, err)
	vb, ok, err := builtin.Get("volcano-job")
	require.NoError(t, err)
	require.True(t, ok)
	vp, err := vb.Compile(interpreter.Options{})
	require.NoError(t, err)
	out = append(out, example{name: "volcano-job-partitioned", p: vp, obj: loadOne(t, "../examples/volcano-job/partitioned.yaml"),
		pods: loadAll(t, "../examples/volcano-job/pods-partitioned.yaml")})
	return append(out, example{name: "trainjob-runtime", p: tp, obj: loadOne(t, "../examples/trainjob/torch-running.yaml"),
		pods: loadAll(t, "../examples/trainjob/pods-torch.yaml"), refs: loadAll(t, "../examples/trainjob/refs/torch-distributed.yaml")})
}

// TestExamples pins, for every example and every target, the objects, the
// pods' links and the warnings (testdata/golden/NAME/TARGET.yaml), and
// checks each object against its API (see checkObject). Regenerate with:
// go test ./podgroups -run TestExamples -update
func TestExamples(t *testing.T) {
	for _, ex := range examples(t) {
		for _, target := range podgroups.Targets() {
			t.Run(ex.name+"/"+string(target), func(t *testing.T) {
				res, err := podgroups.ForProgram(ex.ctx(), ex.p, ex.obj, ex.pods, target, podgroups.Options{})
				require.NoError(t, err)
				require.NotEmpty(t, res.Objects)
				for _, o := range res.Objects {
					checkObject(t, target, o)
				}
				checkInvariants(t, ex, target, res)
				data, err := json.Marshal(res)
				require.NoError(t, err)
				got, err := yaml.JSONToYAML(data)
				require.NoError(t, err)
				checkGolden(t, filepath.Join("testdata", "golden", ex.name, string(target)+".yaml"), got)
			})
		}
	}
}

// checkInvariants holds for every result: each placed pod is linked to
// its group's object exactly once, or unlinked with a reason; every
// group's object carries the group's minimum.
func checkInvariants(t *testing.T, ex example, target podgroups.Target, res *podgroups.Result) {
	t.Helper()
	gangs, err := ex.p.GetGangGroups(ex.ctx(), ex.obj, ex.pods)
	require.NoError(t, err)
	assert.Equal(t, len(ex.pods), len(res.Links)+len(res.Unlinked), "every pod is linked or unlinked")
	groupOf := map[string]string{}
	for _, pl := range gangs.Placements {
		groupOf[pl.Pod] = podgroups.ObjectName(target, pl.Group)
	}
	for _, l := range res.Links {
		assert.Equal(t, groupOf[l.Pod], l.Object, "pod %s", l.Pod)
	}
	minOf := map[string]int64{}
	for _, o := range res.Objects {
		if o.GetKind() != "PodGroup" {
			continue
		}
		path := []string{"spec", "minMember"}
		if target == podgroups.WorkloadAPI {
			path = []string{"spec", "schedulingPolicy", "gang", "minCount"}
		}
		n, found, err := unstructured.NestedInt64(o.Object, path...)
		require.NoError(t, err)
		require.True(t, found, "%s has %v", o.GetName(), path)
		minOf[o.GetAnnotations()[podgroups.GroupAnnotation]] = n
		if target == podgroups.Volcano {
			tasks, _, err := unstructured.NestedMap(o.Object, "spec", "minTaskMember")
			require.NoError(t, err)
			var sum int64
			for _, v := range tasks {
				sum += v.(int64)
			}
			// A stated minimum above the tasks' sum keeps them (a Volcano
			// Job of minAvailable 4 over tasks of 1 and 2, as Volcano's own
			// PodGroup has it); one below is taken from them, so the sum
			// never exceeds the minimum.
			assert.LessOrEqual(t, sum, n, "%s: minTaskMember adds up to at most minMember", o.GetName())
		}
	}
	require.Len(t, minOf, len(gangs.Groups), "one PodGroup per group")
	for _, g := range gangs.Groups {
		assert.Equal(t, g.MinMember, minOf[g.Name], "group %s", g.Name)
	}
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden %s: run go test ./podgroups -update and review it", path)
	assert.Equal(t, string(want), string(got), "%s", path)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func loadAll(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	docs, err := object.Decode(data, file)
	require.NoError(t, err)
	var out []*unstructured.Unstructured
	for _, it := range object.Items(docs) {
		out = append(out, &unstructured.Unstructured{Object: it})
	}
	return out
}

func loadOne(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	objs := loadAll(t, file)
	require.Len(t, objs, 1, file)
	return objs[0]
}

// strictDecode decodes v into out, refusing fields out does not have.
func strictDecode(t *testing.T, v map[string]any, out any) {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(out), fmt.Sprintf("%s", data))
}
