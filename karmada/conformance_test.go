package karmada

import (
	"context"
	"testing"

	"github.com/kartalua/karta/internal/conformance"
)

// TestKarmadaConformance runs Karmada's own third-party customization
// suite, unmodified, through the Interpreter: every case must pass.
func TestKarmadaConformance(t *testing.T) {
	dir := conformance.Require(t)
	report, err := RunTestDir(context.Background(), dir)
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
