package builtin_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// InferenceService's failed mapping reads .status.modelStatus.transitionStatus
// once, `. == "BlockedByFailedLoad" or . == "InvalidSpec"`, where it was two
// matchers reading it each (expected results BlockedByFailedLoad and
// InvalidSpec, through jq tostring): the one expression must answer as the
// two did for every kind of value, a running service's included, and fail
// the same way where the path cannot be read.
func TestInferenceServiceFailedMatcher(t *testing.T) {
	b, ok, err := builtin.Get("inferenceservice")
	require.NoError(t, err)
	require.True(t, ok)
	opts := interpreter.Options{PoolSize: 1}
	merged, err := b.Compile(opts)
	require.NoError(t, err)
	k := b.Karta.DeepCopy()
	sm := &k.Spec.StructureDefinition.RootComponent.StatusDefinition.StatusMappings
	sm.Failed = []karta.StatusMatcher{
		{ByExpression: &karta.ExpressionMatcher{Expression: ".status.modelStatus.transitionStatus", ExpectedResult: "BlockedByFailedLoad"}},
		{ByExpression: &karta.ExpressionMatcher{Expression: ".status.modelStatus.transitionStatus", ExpectedResult: "InvalidSpec"}},
	}
	twoMatchers, err := interpreter.Compile(k, opts)
	require.NoError(t, err)

	ready := []any{map[string]any{"type": "Ready", "status": "True"}}
	tests := []struct {
		name    string
		status  any // the object's .status
		want    karta.Status
		wantErr bool
	}{
		{name: "blocked by failed load", status: map[string]any{"conditions": ready, "modelStatus": map[string]any{"transitionStatus": "BlockedByFailedLoad"}}, want: karta.StatusFailed},
		{name: "invalid spec", status: map[string]any{"conditions": ready, "modelStatus": map[string]any{"transitionStatus": "InvalidSpec"}}, want: karta.StatusFailed},
		{name: "up to date", status: map[string]any{"conditions": ready, "modelStatus": map[string]any{"transitionStatus": "UpToDate"}}, want: karta.StatusRunning},
		{name: "no model status", status: map[string]any{"conditions": ready}, want: karta.StatusRunning},
		{name: "null transition status", status: map[string]any{"conditions": ready, "modelStatus": map[string]any{"transitionStatus": nil}}, want: karta.StatusRunning},
		{name: "a number", status: map[string]any{"conditions": ready, "modelStatus": map[string]any{"transitionStatus": int64(1)}}, want: karta.StatusRunning},
		{name: "a boolean", status: map[string]any{"conditions": ready, "modelStatus": map[string]any{"transitionStatus": true}}, want: karta.StatusRunning},
		{name: "the word in an array", status: map[string]any{"conditions": ready, "modelStatus": map[string]any{"transitionStatus": []any{"InvalidSpec"}}}, want: karta.StatusRunning},
		{name: "the word in an object", status: map[string]any{"conditions": ready, "modelStatus": map[string]any{"transitionStatus": map[string]any{"InvalidSpec": true}}}, want: karta.StatusRunning},
		{name: "the word in other case", status: map[string]any{"conditions": ready, "modelStatus": map[string]any{"transitionStatus": "invalidspec"}}, want: karta.StatusRunning},
		{name: "model status not an object", status: map[string]any{"conditions": ready, "modelStatus": "Loaded"}, wantErr: true},
		{name: "no status", want: karta.StatusInitializing},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := map[string]any{
				"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
				"metadata": map[string]any{"name": "m", "namespace": "ns"},
			}
			if tt.status != nil {
				obj["status"] = tt.status
			}
			u := &unstructured.Unstructured{Object: obj}
			got, err := merged.InterpretStatus(ctx, u)
			was, wasErr := twoMatchers.InterpretStatus(ctx, u)
			if tt.wantErr {
				require.Error(t, err)
				require.Error(t, wasErr)
				assert.Equal(t, wasErr.Error(), err.Error())
				return
			}
			require.NoError(t, err)
			require.NoError(t, wasErr)
			assert.Equal(t, tt.want, got.Status)
			assert.Equal(t, was, got, "the two matchers' answer")
		})
	}
}
