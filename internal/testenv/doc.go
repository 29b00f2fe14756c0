// Package testenv connects integration tests to the real test cluster that
// hack/testenv.sh runs (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok fake nodes).
//
// Integration tests carry the build tag "integration" and are run by
// `make test-integration`, which starts the cluster and exports
// KARTA_TESTENV_KUBECONFIG. They never skip: without the cluster they fail
// with a message saying how to get one, so a green run always means the
// tests talked to a real API server.
//
// Every test works in its own namespace (Namespace) so tests of different
// packages can share one cluster concurrently; CRDs are cluster-wide and
// InstallCRDs is idempotent for the same reason.
package testenv
