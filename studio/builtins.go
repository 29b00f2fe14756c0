package studio

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"path"
	"sort"

	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/examples"
	"github.com/kartalua/karta/internal/exampledir"
)

// The example folder's files of the pods the operator creates, and of the
// revisions its karta_test.yaml revises with.
const (
	podsFile      = "pods.yaml"
	revisionsFile = "revisions.yaml"
)

// builtinSummary is one built-in in the picker.
type builtinSummary struct {
	Name string `json:"name"`
	// Kind is the root component's group/version, Kind.
	Kind string `json:"kind"`
	// States are the file names of its example states (examples/NAME/).
	States []string `json:"states"`
}

// builtinTexts is a built-in as the editors take it.
type builtinTexts struct {
	Name string `json:"name"`
	// Karta is its YAML.
	Karta string `json:"karta"`
	// Script is its bundled Lua override, "" when it has none.
	Script string `json:"script"`
	// States maps each example state's file name to its text.
	States map[string]string `json:"states"`
	// Pods are the example's pods, "" when it has none.
	Pods string `json:"pods"`
	// Revisions are the example's revisions, "" when it has none.
	Revisions string `json:"revisions"`
}

func (h *Handler) serveBuiltins(w http.ResponseWriter, _ *http.Request) {
	all, err := builtin.All()
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, apiError{Error: err.Error()})
		return
	}
	out := make([]builtinSummary, 0, len(all))
	for _, b := range all {
		out = append(out, builtinSummary{Name: b.Name, Kind: b.Karta.Spec.StructureDefinition.RootComponent.Kind.GVK().String(), States: exampleStates(b.Name)})
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *Handler) serveBuiltin(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	b, ok, err := builtin.Get(name)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, apiError{Error: err.Error()})
		return
	}
	if !ok {
		writeJSON(w, http.StatusNotFound, apiError{Error: "no built-in Karta named " + name})
		return
	}
	text, err := kartaYAML(b)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, apiError{Error: err.Error()})
		return
	}
	out := builtinTexts{Name: b.Name, Karta: text, Script: b.Script, States: map[string]string{}}
	for _, s := range exampleStates(b.Name) {
		out.States[s] = exampleFile(b.Name, s)
	}
	out.Pods = exampleFile(b.Name, podsFile)
	out.Revisions = exampleFile(b.Name, revisionsFile)
	writeJSON(w, http.StatusOK, out)
}

// kartaYAML is a built-in's Karta as YAML, without the fields the API
// server would fill in (an empty creationTimestamp).
func kartaYAML(b *builtin.Builtin) (string, error) {
	data, err := json.Marshal(b.Karta)
	if err != nil {
		return "", err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return "", err
	}
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	out, err := yaml.Marshal(m)
	return string(out), err
}

// exampleStates lists a built-in's example states (examples/NAME/), by
// file name, sorted; none when it has no example folder.
func exampleStates(name string) []string {
	entries, err := fs.ReadDir(examples.Files, name)
	if err != nil {
		return []string{}
	}
	out := []string{}
	for _, e := range entries {
		if !e.IsDir() && exampledir.IsState(e.Name()) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// exampleFile is one file of a built-in's example folder, "" when there
// is none.
func exampleFile(name, file string) string {
	data, err := fs.ReadFile(examples.Files, path.Join(name, file))
	if err != nil {
		return ""
	}
	return string(data)
}
