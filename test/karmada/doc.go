// Package karmada proves `karta serve` with Karmada's own webhook client:
// the test starts `karta serve` over TLS (a CA it generates), points
// Karmada's CustomizedInterpreter
// (github.com/karmada-io/karmada/pkg/resourceinterpreter/customized/webhook)
// at it with a ResourceInterpreterWebhookConfiguration, calls every
// operation on every built-in's examples and on a customization that
// scripts all of them, and compares each answer with the one `karta
// karmada run` computes in process.
//
// It is a module of its own so that karta's module does not depend on
// Karmada. It does not import karta's module either: Karmada v1.16 is
// built against k8s.io v0.34 and controller-runtime v0.22, which do not
// compile with karta's k8s.io v0.37 (controller-runtime's cache lacks
// client-go's HasSyncedChecker; with controller-runtime v0.25, Karmada's
// pkg/util/helper calls the old Toleration.ToleratesTaint). So the test
// builds the karta binary from the repository and asks it, the server
// and the in-process answers alike. `make test` runs it after the main
// module, with -count=1: it reads the repository's examples and builds
// its commands, which go test's cache does not watch.
package karmada
