package testenv

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	// KwokNodeAnnotation marks the nodes kwok manages (hack/testenv.sh starts
	// kwok with --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake).
	KwokNodeAnnotation = "kwok.x-k8s.io/node"
	kwokNodeValue      = "fake"
	fakeNodeTimeout    = 30 * time.Second
)

// FakeNode returns the name of a Ready, schedulable kwok fake node (the first
// by name, so tests are repeatable). Pods bound to it are made Running by
// kwok; pods owned by a Job then complete. The test fails if there is none
// within 30 s.
func FakeNode(t testing.TB, cfg *rest.Config) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("kubernetes client: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), fakeNodeTimeout)
	defer cancel()
	var (
		name string
		last error
	)
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			last = err
			return false, nil
		}
		name = readyFakeNode(nodes.Items)
		return name != "", nil
	})
	if err != nil {
		if last == nil {
			last = fmt.Errorf("no node annotated %s=%s is Ready and schedulable", KwokNodeAnnotation, kwokNodeValue)
		}
		t.Fatalf("no kwok fake node within %s: %v; hack/testenv.sh starts them unless KARTA_TESTENV_NODES=0", fakeNodeTimeout, last)
	}
	return name
}

func readyFakeNode(nodes []corev1.Node) string {
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	for _, n := range nodes {
		if n.Annotations[KwokNodeAnnotation] != kwokNodeValue || n.Spec.Unschedulable {
			continue
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return n.Name
			}
		}
	}
	return ""
}
