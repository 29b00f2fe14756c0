package testenv

import (
	"os"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// KubeconfigEnv names the variable hack/testenv.sh env exports.
const KubeconfigEnv = "KARTA_TESTENV_KUBECONFIG"

// Client-side rate limits: client-go's defaults (5 QPS, burst 10) would make
// tests that create dozens of objects wait on the limiter, not the server.
const (
	clientQPS   = 100
	clientBurst = 200
)

// Kubeconfig returns the path of the test cluster's kubeconfig from
// $KARTA_TESTENV_KUBECONFIG. Without a usable one the test fails: integration
// tests never skip.
func Kubeconfig(t testing.TB) string {
	t.Helper()
	path := os.Getenv(KubeconfigEnv)
	if path == "" {
		t.Fatalf("%s is not set: integration tests need the test cluster; run `make test-integration` "+
			"(or: hack/testenv.sh start && eval \"$(hack/testenv.sh env)\")", KubeconfigEnv)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s=%s: %v; is the test cluster running? run `make test-integration` "+
			"(or: hack/testenv.sh start)", KubeconfigEnv, path, err)
	}
	return path
}

// Config returns a rest.Config for the test cluster (see Kubeconfig).
func Config(t testing.TB) *rest.Config {
	t.Helper()
	path := Kubeconfig(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("loading kubeconfig %s: %v", path, err)
	}
	cfg.QPS = clientQPS
	cfg.Burst = clientBurst
	return cfg
}
