package interpreter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Every hook that reads the workload object refuses one of another kind:
// the Karta's paths would quietly find nothing there (a Volcano Job read as
// a PyTorchJob is Undefined, exit 0). Options.AllowKindMismatch lets it run.
func TestHooksRefuseAnotherKind(t *testing.T) {
	k := progKartaFile(t, "../examples/kartas/pytorchjob.yaml")
	job := progObjFile(t, "../examples/pytorchjob/running.yaml")[0]
	pods := progObjFile(t, "../examples/pytorchjob/pods.yaml")
	strict := progCompile(t, k, Options{PoolSize: 1})
	lenient := progCompile(t, k, Options{PoolSize: 1, AllowKindMismatch: true})
	want := schema.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "PyTorchJob"}

	retyped := func(apiVersion, kind string) *unstructured.Unstructured {
		u := job.DeepCopy()
		if apiVersion == "" {
			delete(u.Object, "apiVersion")
		} else {
			u.Object["apiVersion"] = apiVersion
		}
		if kind == "" {
			delete(u.Object, "kind")
		} else {
			u.Object["kind"] = kind
		}
		return u
	}
	cases := []struct {
		name             string
		apiVersion, kind string
		got              schema.GroupVersionKind
		msg              string
	}{
		{"another kind", "batch.volcano.sh/v1alpha1", "Job", schema.GroupVersionKind{Group: "batch.volcano.sh", Version: "v1alpha1", Kind: "Job"},
			`karta "pytorchjob": InterpretStatus: the object is batch.volcano.sh/v1alpha1 Job; this Karta describes kubeflow.org/v1 PyTorchJob`},
		{"another version", "kubeflow.org/v2", "PyTorchJob", schema.GroupVersionKind{Group: "kubeflow.org", Version: "v2", Kind: "PyTorchJob"},
			`karta "pytorchjob": InterpretStatus: the object is kubeflow.org/v2 PyTorchJob; this Karta describes kubeflow.org/v1 PyTorchJob`},
		{"a List", "v1", "List", schema.GroupVersionKind{Version: "v1", Kind: "List"},
			`karta "pytorchjob": InterpretStatus: the object is v1 List; this Karta describes kubeflow.org/v1 PyTorchJob`},
		{"no kind", "", "", schema.GroupVersionKind{},
			`karta "pytorchjob": InterpretStatus: the object has no apiVersion and kind; this Karta describes kubeflow.org/v1 PyTorchJob`},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := retyped(tc.apiVersion, tc.kind)
			_, err := strict.InterpretStatus(ctx, obj)
			var ke *KindMismatchError
			require.ErrorAs(t, err, &ke)
			assert.Equal(t, &KindMismatchError{Karta: "pytorchjob", Hook: HookInterpretStatus, Want: want, Got: tc.got}, ke)
			assert.EqualError(t, err, tc.msg)

			hooks := map[Hook]func(p *Program) error{
				HookGetPodSpecs:   func(p *Program) error { _, err := p.GetPodSpecs(ctx, obj); return err },
				HookReviseSpec:    func(p *Program) error { _, err := p.ReviseSpec(ctx, obj, nil); return err },
				HookSuspend:       func(p *Program) error { _, err := p.Suspend(ctx, obj); return err },
				HookResume:        func(p *Program) error { _, err := p.Resume(ctx, obj); return err },
				HookGetGangGroups: func(p *Program) error { _, err := p.GetGangGroups(ctx, obj, pods); return err },
				"PlacePod":        func(p *Program) error { _, err := p.PlacePod(ctx, obj, pods[0]); return err },
				"PlacePods":       func(p *Program) error { _, err := p.PlacePods(ctx, obj, pods); return err },
			}
			for h, call := range hooks {
				err := call(strict)
				require.ErrorAs(t, err, &ke, h)
				assert.Equal(t, h, ke.Hook)
				assert.NoError(t, call(lenient), "%s with AllowKindMismatch", h)
			}
			assert.ErrorAs(t, strict.CheckKind(obj), &ke)
			assert.NoError(t, lenient.CheckKind(obj))
		})
	}
	assert.NoError(t, strict.CheckKind(job), "the Karta's own kind")
	res, err := strict.InterpretStatus(ctx, job)
	require.NoError(t, err)
	assert.Equal(t, "Running", string(res.Status))
}
