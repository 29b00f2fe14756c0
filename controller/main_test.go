package controller

import (
	"os"
	"testing"

	"github.com/kartalua/karta/isolation"
)

// TestMain lets the test binary be the isolation test's workers.
func TestMain(m *testing.M) {
	isolation.RunWorkerIfChild()
	os.Exit(m.Run())
}
