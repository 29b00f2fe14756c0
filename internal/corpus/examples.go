package corpus

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
)

// Workload is a built-in with the example objects of examples/NAME that
// its benchmarks run on, in the form a controller holds them (client-go's
// unstructured: int64 and float64 numbers).
type Workload struct {
	Name    string
	Builtin *builtin.Builtin
	// Running is running.yaml; Pods is pods.yaml (the pods of Running and
	// a few that belong elsewhere); Revisions is revisions.yaml.
	Running   *unstructured.Unstructured
	Pods      []*unstructured.Unstructured
	Revisions []interpreter.Revision
}

// LoadWorkloads reads every built-in's examples from examplesDir.
func LoadWorkloads(examplesDir string) ([]*Workload, error) {
	all, err := builtin.All()
	if err != nil {
		return nil, err
	}
	out := make([]*Workload, 0, len(all))
	for _, b := range all {
		dir := filepath.Join(examplesDir, b.Name)
		w := &Workload{Name: b.Name, Builtin: b}
		if w.Running, err = LoadObject(filepath.Join(dir, "running.yaml")); err != nil {
			return nil, err
		}
		if w.Pods, err = LoadObjects(filepath.Join(dir, "pods.yaml")); err != nil {
			return nil, err
		}
		data, err := os.ReadFile(filepath.Join(dir, "revisions.yaml"))
		if err != nil {
			return nil, err
		}
		v, err := object.DecodeValue(data, dir+"/revisions.yaml")
		if err != nil {
			return nil, err
		}
		if w.Revisions, err = interpreter.DecodeRevisions(v); err != nil {
			return nil, fmt.Errorf("%s/revisions.yaml: %w", dir, err)
		}
		out = append(out, w)
	}
	return out, nil
}

// LoadObject reads the one object of a YAML or JSON file.
func LoadObject(file string) (*unstructured.Unstructured, error) {
	objs, err := LoadObjects(file)
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 {
		return nil, fmt.Errorf("%s: want one object, got %d", file, len(objs))
	}
	return objs[0], nil
}

// LoadObjects reads every object of a file, Lists expanded, each converted
// to client-go's form through its JSON.
func LoadObjects(file string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	docs, err := object.Decode(data, file)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, o := range object.Items(docs) {
		u, err := ClientGoForm(o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		out = append(out, u)
	}
	return out, nil
}

// ClientGoForm converts a decoded object to what client-go hands a
// controller: the object's JSON decoded by unstructured (int64 integers).
func ClientGoForm(obj map[string]any) (*unstructured.Unstructured, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		return nil, err
	}
	return u, nil
}

// Program compiles the workload's built-in with default options.
func (w *Workload) Program() (*interpreter.Program, error) {
	return w.Builtin.Compile(interpreter.Options{})
}
