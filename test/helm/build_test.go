package helm

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The version and commit the tests stamp into the karta they build.
const (
	stampVersion = "v0.0.0-charttest"
	stampCommit  = "0123456789abcdef0123456789abcdef01234567"
)

var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	out  []byte
}

// buildKarta builds bin/karta the way `make build` does (static, version
// and commit stamped), once per test binary, and returns its path.
func buildKarta(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "karta-charttest-")
		if built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "karta")
		cmd := exec.Command("make", "--no-print-directory", "-C", repoRoot, "build",
			"BIN="+built.bin, "VERSION="+stampVersion, "COMMIT="+stampCommit)
		built.out, built.err = cmd.CombinedOutput()
	})
	require.NoError(t, built.err, "make build: %s", built.out)
	return built.bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
