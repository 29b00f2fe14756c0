// Package exampledir knows the layout of a built-in's example folder
// (examples/NAME/): the workload object in each of its states, one file
// each, beside files that are not states — the pods the operator creates,
// the revisions, the karta test file, the README, the goldens, and the
// objects the Karta's references read in refs/ (a folder, so never a
// state). Every
// tool and test that walks the examples asks it which files are states.
package exampledir

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// notStates are the YAML files of an example folder that hold no state of
// the workload object.
var notStates = map[string]bool{
	"pods.yaml":       true, // the pods the operator creates
	"revisions.yaml":  true, // the revisions of karta revise
	"karta_test.yaml": true, // the karta test file (internal/kartatest)
	"crd.yaml":        true, // a CRD shipped with a user-written Karta's example
}

// IsState reports whether a file of an example folder (by its base name)
// holds a state of the workload object.
func IsState(base string) bool {
	// pods-STATE.yaml holds the pods of one state (the leaders alone, before
	// the workers exist), as revisions-*.yaml holds more revisions.
	return strings.HasSuffix(base, ".yaml") && !notStates[base] &&
		!strings.HasPrefix(base, "revisions") && !strings.HasPrefix(base, "pods-")
}

// States returns the paths of dir's state files, sorted.
func States(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && IsState(e.Name()) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}
