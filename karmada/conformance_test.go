package karmada

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// conformanceDir is Karmada's bundled third-party customizations with
// their tests, kept beside the repository (shared/conformance), never in
// it; $KARTA_KARMADA_CORPUS overrides where (as for internal/perf's
// benchmarks), for a checkout that is not beside it.
var conformanceDir = func() string {
	if d := os.Getenv("KARTA_KARMADA_CORPUS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "shared", "conformance", "karmada", "resourcecustomizations")
}()

// TestKarmadaConformance runs Karmada's own third-party customization
// suite, unmodified, through the Interpreter: every case must pass.
func TestKarmadaConformance(t *testing.T) {
	if _, err := os.Stat(conformanceDir); err != nil {
		t.Skipf("Karmada's conformance corpus is not at %s (%v): skipping", conformanceDir, err)
	}
	report, err := RunTestDir(context.Background(), conformanceDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range report.Failures {
		t.Error(f.String())
	}
	t.Log(report.Summary())
	if report.Failed != 0 || report.Passed == 0 {
		t.Fatalf("conformance: %s", report.Summary())
	}
}
