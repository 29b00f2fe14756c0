// Package kartatest runs `karta test`: the test convention for Kartas. A
// folder holds a test file, karta_test.yaml, beside the objects, pods and
// revisions it names (and, for a Karta of one's own, the Karta and its
// scripts); each case runs the hooks on one object and compares what they
// give with what the case expects, inline or in a golden file. The
// built-ins' examples (examples/NAME/) follow the same convention.
package kartatest

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/internal/yamlerr"
)

// FileName is the test file `karta test DIR` looks for in DIR and below.
const FileName = "karta_test.yaml"

// Suite is one test file.
type Suite struct {
	// Karta is the Karta under test: a file relative to the test file's
	// folder, or a built-in's name. Empty: each object's built-in, found
	// by its apiVersion and kind.
	Karta string `json:"karta,omitempty"`
	// Scripts are Lua files, relative to the folder, that override hooks
	// (as --script).
	Scripts []string `json:"scripts,omitempty"`
	Tests   []Case   `json:"tests"`
}

// Case runs the hooks on one object.
type Case struct {
	// Name names the case in the report; default: the object's file name
	// without its extension.
	Name string `json:"name,omitempty"`
	// Object is the workload object's file, relative to the folder.
	Object string `json:"object"`
	// Refs are files, relative to the folder, holding the objects the
	// Karta's references read (as karta --ref: a static resolver of them
	// all); without them every reference is absent.
	Refs   []string     `json:"refs,omitempty"`
	Status *StatusCheck `json:"status,omitempty"`
	Pods   *PodsCheck   `json:"pods,omitempty"`
	Gang   *GangCheck   `json:"gang,omitempty"`
	Revise *ReviseCheck `json:"revise,omitempty"`
}

// StatusCheck is what InterpretStatus must give: each field that is set is
// compared; Golden is the whole result as `karta status -o json` prints it.
type StatusCheck struct {
	Status  string   `json:"status,omitempty"`
	Matched []string `json:"matched,omitempty"`
	// Phase is compared when set; "-" expects no phase.
	Phase  string `json:"phase,omitempty"`
	Golden string `json:"golden,omitempty"`
	// Error expects the hook to fail with an error containing it.
	Error string `json:"error,omitempty"`
}

// PodsCheck is what GetPodSpecs must give.
type PodsCheck struct {
	// Count is the number of pod definitions (present instances).
	Count *int `json:"count,omitempty"`
	// Items, when set, must equal the definitions summarised: component,
	// instance, replicas and the containers' images, in order.
	Items  []PodSummary `json:"items,omitempty"`
	Golden string       `json:"golden,omitempty"`
	Error  string       `json:"error,omitempty"`
}

// PodSummary is one pod definition in short.
type PodSummary struct {
	Component string   `json:"component"`
	Instance  string   `json:"instance,omitempty"`
	Replicas  *int64   `json:"replicas,omitempty"`
	Images    []string `json:"images,omitempty"`
}

// GangCheck is what GetGangGroups must give for the pods of a file.
type GangCheck struct {
	// Pods is the Pods' file, relative to the folder (required).
	Pods string `json:"pods"`
	// Groups, when set, must equal the groups: name, minMember and the
	// number of pods, in order.
	Groups []GroupSummary `json:"groups,omitempty"`
	// Unmatched is the number of pods in no group.
	Unmatched *int   `json:"unmatched,omitempty"`
	Golden    string `json:"golden,omitempty"`
	Error     string `json:"error,omitempty"`
}

// GroupSummary is one gang group in short.
type GroupSummary struct {
	Name      string `json:"name"`
	MinMember int64  `json:"minMember"`
	Pods      int    `json:"pods"`
}

// ReviseCheck is what ReviseSpec must give for the revisions of a file.
type ReviseCheck struct {
	// Revisions is the revisions' file, relative to the folder (required).
	Revisions string `json:"revisions"`
	// Type is the patch type of revisions that do not say (merge by
	// default), as `karta revise --type`.
	Type string `json:"type,omitempty"`
	// Patch is the golden RFC 6902 JSON Patch, as `karta revise -o patch`
	// prints it; Object the golden revised object, as `karta revise`
	// prints it (YAML, the input's layout kept).
	Patch  string `json:"patch,omitempty"`
	Object string `json:"object,omitempty"`
	Error  string `json:"error,omitempty"`
}

// unknownField is encoding/json's strict error, with the field's path.
var unknownField = regexp.MustCompile(`^unknown field "([^"]+)"`)

// readSuite decodes a test file strictly: an unknown field is an error
// naming it, so that a misspelt expectation does not pass unchecked.
func readSuite(file string) (*Suite, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	// Syntax errors are reported as every reader of karta's inputs
	// reports them, at their line in the file.
	if _, err := yamlerr.Parse(data, file); err != nil {
		return nil, err
	}
	var s Suite
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		msg := yamlerr.Plain(err.Error())
		if m := unknownField.FindStringSubmatch(msg); m != nil {
			// At the key's own line, with its path and what the place
			// takes: "tests[0].status.statsu: unknown field".
			var root yamlv3.Node
			if yamlv3.Unmarshal(data, &root) == nil {
				if at, line, known := unknownFieldAt(&root, reflect.TypeOf(s), ""); line > 0 {
					return nil, errors.New(yamlerr.Format(file, line, 0, at, fmt.Sprintf("unknown field %q (want one of: %s)", m[1], strings.Join(known, ", "))))
				}
			}
		}
		return nil, errors.New(yamlerr.Format(file, 0, 0, "", msg))
	}
	if len(s.Tests) == 0 {
		return nil, fmt.Errorf("no tests: list the cases under tests, each with an object")
	}
	for i, c := range s.Tests {
		switch {
		case c.Object == "":
			return nil, fmt.Errorf("tests[%d].object: required: the workload object's file", i)
		case c.Gang != nil && c.Gang.Pods == "":
			return nil, fmt.Errorf("tests[%d].gang.pods: required: the Pods' file", i)
		case c.Revise != nil && c.Revise.Revisions == "":
			return nil, fmt.Errorf("tests[%d].revise.revisions: required: the revisions' file", i)
		}
	}
	return &s, nil
}
