// Package helm tests the karta Helm chart (charts/karta) and the image
// recipe (Dockerfile): rendering and linting with Helm's own Go library,
// offline; and, with the build tag "integration", installing the rendered
// objects on the test cluster and running `karta controller` as the
// chart's ServiceAccount.
//
// It is a module of its own so that karta's module does not depend on Helm.
// `make test` and `make test-integration` run it after the main module,
// with -count=1: its tests read the chart, the Dockerfile and the Makefile,
// which lie outside this module, and go test's cache does not watch such
// files.
package helm
