package isolation

import (
	"os"
	"testing"
)

// TestMain lets the test binary be its own workers: the supervisor
// re-executes it with the worker's environment.
func TestMain(m *testing.M) {
	RunWorkerIfChild()
	os.Exit(m.Run())
}
