// Package builtin holds the Kartas karta ships for well-known workload
// kinds (JobSet, PyTorchJob, MPIJob, RayCluster, RayJob, KServe
// InferenceService, Knative Service, NIMService, LeaderWorkerSet, Milvus,
// DynamoGraphDeployment, RayService, AppWrapper, the agent Sandbox, Argo
// Workflow, FlinkDeployment, Volcano Job), embedded in the binary and
// registered by the GVK of their root component, each with its bundled
// script (package scripts) when it has one.
package builtin

import (
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/scripts"
)

//go:embed kartas/*.yaml
var files embed.FS

// Builtin is one built-in Karta.
type Builtin struct {
	// Name is the -k name, e.g. "pytorchjob" (the Karta's metadata.name).
	Name  string
	Karta *karta.Karta
	// Script is the bundled override, "" when there is none.
	Script string
}

var (
	loadOnce sync.Once
	loaded   []*Builtin
	loadErr  error
)

// All returns every built-in, sorted by name. They are loaded and checked
// once; a broken embedded file is a build defect reported here.
func All() ([]*Builtin, error) {
	loadOnce.Do(func() { loaded, loadErr = load() })
	return loaded, loadErr
}

func load() ([]*Builtin, error) {
	entries, err := files.ReadDir("kartas")
	if err != nil {
		return nil, err
	}
	var out []*Builtin
	for _, e := range entries {
		file := path.Join("kartas", e.Name())
		data, err := files.ReadFile(file)
		if err != nil {
			return nil, err
		}
		ks, err := karta.Load(data, "builtin/"+file)
		if err != nil {
			return nil, err
		}
		for _, k := range ks {
			b := &Builtin{Name: k.Name, Karta: k}
			src, ok, err := scripts.For(k.Name)
			if err != nil {
				return nil, err
			}
			if ok {
				b.Script = src
			}
			out = append(out, b)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Get returns the built-in of a name.
func Get(name string) (*Builtin, bool, error) {
	all, err := All()
	if err != nil {
		return nil, false, err
	}
	for _, b := range all {
		if b.Name == name {
			return b, true, nil
		}
	}
	return nil, false, nil
}

// Names lists the built-ins' names.
func Names() []string {
	all, _ := All()
	names := make([]string, len(all))
	for i, b := range all {
		names[i] = b.Name
	}
	return names
}

// Compile compiles a built-in with its bundled script first, then extra
// scripts (later wins, as with --script).
func (b *Builtin) Compile(opts interpreter.Options) (*interpreter.Program, error) {
	if b.Script != "" {
		opts.Scripts = append([]interpreter.Script{{Name: "scripts/" + b.Name + ".lua", Source: b.Script}}, opts.Scripts...)
	}
	p, err := interpreter.Compile(b.Karta, opts)
	if err != nil {
		return nil, fmt.Errorf("built-in %q: %w", b.Name, err)
	}
	return p, nil
}

// Registry compiles every built-in and registers it by the GVK of its root
// component.
func Registry(opts interpreter.Options) (*interpreter.Registry, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	r := interpreter.NewRegistry()
	for _, b := range all {
		p, err := b.Compile(opts)
		if err != nil {
			return nil, err
		}
		if old := r.Put(p); old != nil {
			return nil, fmt.Errorf("built-ins %q and %q both claim %s", old.Name(), p.Name(), p.GVK())
		}
	}
	return r, nil
}

// Components lists a Karta's component names, root first, for listings.
func Components(k *karta.Karta) string {
	var names []string
	for _, c := range k.Spec.StructureDefinition.Components() {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}
