package karmada

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// expectedValue decodes a test's expected value as the harness does
// (YAML, numbers as float64).
func expectedValue(t *testing.T, doc string) any {
	t.Helper()
	var v any
	require.NoError(t, yaml.Unmarshal([]byte(doc), &v))
	return v
}

func TestCompareOutput(t *testing.T) {
	obj := func(status map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Thing", "status": status}}
	}
	for _, tc := range []struct {
		name     string
		expected string
		actual   any
		equal    bool
	}{
		{"quantities compare by value", `{resourceRequest: {cpu: 1, memory: 1024Mi}}`,
			&ReplicaRequirements{ResourceRequest: corev1.ResourceList{"cpu": resource.MustParse("1000m"), "memory": resource.MustParse("1Gi")}}, true},
		{"a different quantity differs", `{resourceRequest: {cpu: 2}}`,
			&ReplicaRequirements{ResourceRequest: corev1.ResourceList{"cpu": resource.MustParse("1")}}, false},
		{"expected requirements, none produced", `{resourceRequest: {cpu: 1}}`, (*ReplicaRequirements)(nil), false},
		{"dependencies in any order", `[{apiVersion: v1, kind: Secret, name: b}, {apiVersion: v1, kind: ConfigMap, name: a}]`,
			[]DependentObjectReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "a"}, {APIVersion: "v1", Kind: "Secret", Name: "b"}}, true},
		{"no dependencies equals an empty list", `[]`, []DependentObjectReference(nil), true},
		{"components in any order", `[{name: b, replicas: 2}, {name: a, replicas: 1}]`,
			[]Component{{Name: "a", Replicas: 1}, {Name: "b", Replicas: 2}}, true},
		{"component replicas differ", `[{name: a, replicas: 2}]`, []Component{{Name: "a", Replicas: 1}}, false},
		{"excluded fields are not compared", `{apiVersion: v1, kind: Thing, status: {at: "{{EXCLUDE}}", conditions: [{t: "{{EXCLUDE}}", ok: true}], count: 1}}`,
			obj(map[string]any{"at": "2026-01-01", "conditions": []any{map[string]any{"t": "now", "ok": true}}, "count": int64(1)}), true},
		{"but the rest is", `{apiVersion: v1, kind: Thing, status: {at: "{{EXCLUDE}}", count: 2}}`,
			obj(map[string]any{"at": "2026-01-01", "count": int64(1)}), false},
		{"an object field the test lacks differs", `{apiVersion: v1, kind: Thing, status: {}}`,
			obj(map[string]any{"extra": true}), false},
		{"replica as JSON text", `3`, int32(3), true},
		{"healthy as JSON text", `false`, false, true},
		{"status as JSON text", `{ready: 1, phase: Running}`, statusValue([]byte(`{"phase":"Running","ready":1}`)), true},
		{"status numbers must print alike", `{ready: 1}`, statusValue([]byte(`{"ready":1.5}`)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmp, err := compareOutput(expectedValue(t, tc.expected), tc.actual)
			require.NoError(t, err)
			assert.Equal(t, tc.equal, cmp.equal, "expected:\n%s\nactual:\n%s", cmp.expected, cmp.actual)
		})
	}
	_, err := compareOutput(expectedValue(t, `{status: {}}`), obj(nil))
	assert.ErrorContains(t, err, "failed to unmarshal expected JSON into Unstructured", "an expected object needs a kind")
}
