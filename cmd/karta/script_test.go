package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/kartalua/karta/isolation"
)

// TestMain lets testscript run this test binary as the karta command, so
// that the scripts below exercise the real process: its arguments, its
// standard streams and its exit code.
func TestMain(m *testing.M) {
	isolation.RunWorkerIfChild() // the isolated servers' workers
	testscript.Main(m, map[string]func(){
		"karta": main,
	})
}

// TestScripts runs testdata/script/*.txtar: each runs the karta binary the
// way a user does, in a directory holding the repository's examples and
// built-in testdata (copied in as the script's files need them).
func TestScripts(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("REPO", root)
			env.Setenv("HOME", env.WorkDir) // no ~/.kube/config of the machine
			env.Setenv("KUBECONFIG", filepath.Join(env.WorkDir, "no-kubeconfig"))
			return os.Symlink(filepath.Join(root, "examples"), filepath.Join(env.WorkDir, "examples"))
		},
	})
}
