// Package conformance locates Karmada's third-party customization corpus,
// the data karmada's conformance tests, cmd/karta's and test/perf's
// benchmarks read in place, and decides what a test does when it is
// missing: a developer's checkout without it skips, with a message saying
// how to get it; a CI run (CI set) fails, since CI has the corpus beside
// the clone and a missing one means the suite silently stopped running.
package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Env names a directory that overrides where the corpus is read from.
const Env = "KARTA_KARMADA_CORPUS"

// Source is where the corpus comes from, for the message of a missing one.
const Source = "the resourcecustomizations folder of github.com/karmada-io/karmada " +
	"(pkg/resourceinterpreter/default/thirdparty/resourcecustomizations, commit f8fdd02df376)"

// KarmadaDir is $KARTA_KARMADA_CORPUS, else the corpus beside the
// repository: shared/conformance/karmada/resourcecustomizations next to
// the directory holding karta's go.mod, found from the working directory
// up (a test runs in its package's directory; the test modules under
// test/ have go.mods of their own, which are passed by). When none is
// found it is the path relative to the working directory.
func KarmadaDir() string {
	if d := os.Getenv(Env); d != "" {
		return d
	}
	return filepath.Join(repositoryRoot(), "..", "shared", "conformance", "karmada", "resourcecustomizations")
}

// mainModule is the module line of karta's own go.mod.
const mainModule = "module github.com/kartalua/karta"

// repositoryRoot is the nearest directory at or above the working
// directory whose go.mod is karta's, or "." when there is none.
func repositoryRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			first, _, _ := strings.Cut(string(data), "\n")
			if strings.TrimSpace(first) == mainModule {
				return dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "."
		}
		dir = parent
	}
}

// InCI reports whether $CI says the run is a CI run: set to anything but
// a false value ("false", "0", …) as strconv.ParseBool reads it.
func InCI() bool {
	v := os.Getenv("CI")
	if v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	return err != nil || b
}

// Require returns KarmadaDir when the corpus is there. When it is not, it
// fails tb under CI and skips it elsewhere, saying how to get the corpus;
// it then returns "" (a real testing.TB never returns from either).
func Require(tb testing.TB) string {
	tb.Helper()
	dir := KarmadaDir()
	if _, err := os.Stat(dir); err != nil {
		msg := fmt.Sprintf("Karmada's conformance corpus is not at %s (%v): put %s there, or set %s to where it is", dir, err, Source, Env)
		if InCI() {
			tb.Fatalf("%s; CI is set, so its absence fails the run instead of skipping it", msg)
			return ""
		}
		tb.Skipf("%s; skipping (under CI this fails)", msg)
		return ""
	}
	return dir
}
