package testenv

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// managedByLabel marks the namespaces Namespace creates, so leftovers of an
// interrupted run are easy to find: kubectl get ns -l app.kubernetes.io/managed-by=karta-testenv.
const managedByLabel = "app.kubernetes.io/managed-by"

const (
	managedByValue = "karta-testenv"
	// namespacePrefixMax leaves room for the server's 5-character suffix
	// and keeps names readable.
	namespacePrefixMax = 40
	// cleanupTimeout bounds the namespace deletion request at cleanup.
	cleanupTimeout = 30 * time.Second
)

// Namespace creates a namespace named after the test (plus a server-generated
// suffix, so reruns and parallel packages never collide) and deletes it when
// the test ends. It also makes sure the namespace's "default" ServiceAccount
// exists: the ServiceAccount admission plugin rejects pods until it does, and
// the controller-manager creates it only asynchronously (or never, with
// KARTA_TESTENV_NODES=0).
func Namespace(t testing.TB, cfg *rest.Config) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("kubernetes client: %v", err)
	}
	ctx := t.Context()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: namespacePrefix(t.Name()),
			Labels:       map[string]string{managedByLabel: managedByValue},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace for %s: %v", t.Name(), err)
	}
	t.Cleanup(func() {
		// t.Context() is already canceled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		policy := metav1.DeletePropagationBackground
		err := cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{PropagationPolicy: &policy})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting namespace %s: %v", ns.Name, err)
		}
	})

	_, err = cs.CoreV1().ServiceAccounts(ns.Name).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating the default ServiceAccount in %s: %v", ns.Name, err)
	}
	return ns.Name
}

// namespacePrefix turns a test name such as "TestRevise/live_JobSet" into a
// DNS label prefix such as "testrevise-live-jobset-".
func namespacePrefix(testName string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(testName) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	p := b.String()
	if len(p) > namespacePrefixMax {
		p = p[:namespacePrefixMax]
	}
	p = strings.TrimRight(p, "-")
	if p == "" {
		p = "test"
	}
	return p + "-"
}
