package conformance

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// recorder is a testing.TB that records Fatalf and Skipf instead of
// stopping the goroutine, so that Require's verdict can be checked.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }
func (r *recorder) Skipf(format string, args ...any)  { r.skip = fmt.Sprintf(format, args...) }

func TestRequire(t *testing.T) {
	present := t.TempDir()
	missing := filepath.Join(present, "absent")
	tests := []struct {
		name      string
		dir, ci   string
		wantDir   string
		wantFatal bool
		wantSkip  bool
	}{
		{name: "present, developer", dir: present, wantDir: present},
		{name: "present, CI", dir: present, ci: "true", wantDir: present},
		{name: "missing, developer", dir: missing, wantSkip: true},
		{name: "missing, CI=false", dir: missing, ci: "false", wantSkip: true},
		{name: "missing, CI=true", dir: missing, ci: "true", wantFatal: true},
		{name: "missing, CI=1", dir: missing, ci: "1", wantFatal: true},
		{name: "missing, CI=yes (not a bool: set)", dir: missing, ci: "yes", wantFatal: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(Env, tc.dir)
			t.Setenv("CI", tc.ci)
			r := &recorder{TB: t}
			got := Require(r)
			assert.Equal(t, tc.wantDir, got)
			if tc.wantFatal {
				assert.Contains(t, r.fatal, missing)
				assert.Contains(t, r.fatal, Env, "says how to point at the corpus")
				assert.Contains(t, r.fatal, "karmada-io/karmada", "says where to get it")
			} else {
				assert.Empty(t, r.fatal)
			}
			if tc.wantSkip {
				assert.Contains(t, r.skip, missing)
				assert.Contains(t, r.skip, "karmada-io/karmada")
			} else {
				assert.Empty(t, r.skip)
			}
		})
	}
}

func TestKarmadaDirDefaultIsBesideTheModule(t *testing.T) {
	t.Setenv(Env, "")
	want, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "conformance", "karmada", "resourcecustomizations"))
	assert.NoError(t, err)
	assert.Equal(t, want, KarmadaDir())
}
