package testenv

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func node(name string, fake, ready, unschedulable bool) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if fake {
		n.Annotations = map[string]string{KwokNodeAnnotation: "fake"}
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	n.Status.Conditions = []corev1.NodeCondition{
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
		{Type: corev1.NodeReady, Status: status},
	}
	n.Spec.Unschedulable = unschedulable
	return n
}

func TestReadyFakeNode(t *testing.T) {
	tests := []struct {
		name  string
		nodes []corev1.Node
		want  string
	}{
		{"none", nil, ""},
		{"first ready fake node by name", []corev1.Node{node("kwok-node-1", true, true, false), node("kwok-node-0", true, true, false)}, "kwok-node-0"},
		{"not ready is skipped", []corev1.Node{node("kwok-node-0", true, false, false), node("kwok-node-1", true, true, false)}, "kwok-node-1"},
		{"real node is skipped", []corev1.Node{node("a-real-node", false, true, false), node("kwok-node-0", true, true, false)}, "kwok-node-0"},
		{"cordoned node is skipped", []corev1.Node{node("kwok-node-0", true, true, true)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, readyFakeNode(tt.nodes))
		})
	}
}
