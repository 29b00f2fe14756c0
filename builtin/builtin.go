// Package builtin holds the Kartas karta ships for well-known workload
// kinds (Kubernetes' Pod, Deployment, ReplicaSet, StatefulSet, DaemonSet,
// Job and CronJob; JobSet, PyTorchJob, MPIJob, RayCluster, RayJob, KServe
// InferenceService and LLMInferenceService, Knative Service, NIMService,
// NIMCache, LeaderWorkerSet, Milvus, DynamoGraphDeployment, Grove's
// PodCliqueSet, Kubeflow's TFJob, XGBoostJob, JAXJob, PaddleJob and
// Notebook, Kubeflow Trainer's TrainJob, the Spark operator's
// SparkApplication, RayService, AppWrapper, the agent Sandbox, Argo
// Workflow, FlinkDeployment, Volcano Job, …), embedded in the binary and registered by the GVK
// of their root component, each with its bundled script (package scripts)
// when it has one.
package builtin

import (
	"embed"
	"fmt"
	"path"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

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

// indexed is one embedded file as the index knows it: the Karta's name
// and root GVK, read without validating, and the full load done on first
// use.
type indexed struct {
	name string
	gvk  schema.GroupVersionKind
	file string
	once sync.Once
	b    *Builtin
	err  error
}

var (
	indexOnce sync.Once
	index     []*indexed
	indexErr  error
)

// catalog is the index of the embedded Kartas, sorted by name, so that
// looking one built-in up does not load and validate all of them.
func catalog() ([]*indexed, error) {
	indexOnce.Do(func() { index, indexErr = readIndex() })
	return index, indexErr
}

// readIndex is the index of index_gen.go: each file's name and root kind,
// written by `make generate` from a peek at the files (peekIndex), so that
// a process's first lookup decodes no YAML (decoding the 37 files to peek
// took 14 of the 20 ms to a first answer; BenchmarkRegistry).
// TestGeneratedIndex keeps it equal to the peek, and TestIndexMatchesLoad
// the peek equal to the full load.
func readIndex() ([]*indexed, error) {
	out := make([]*indexed, len(generatedIndex))
	for i, e := range generatedIndex {
		out[i] = &indexed{name: e.name, gvk: e.gvk, file: e.file}
	}
	return out, nil
}

// indexEntry is one line of index_gen.go.
type indexEntry struct {
	name string
	gvk  schema.GroupVersionKind
	file string
}

// peek is the part of a Karta the index reads.
type peek struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		StructureDefinition struct {
			RootComponent *struct {
				Kind *karta.GroupVersionKind `json:"kind"`
			} `json:"rootComponent"`
		} `json:"structureDefinition"`
	} `json:"spec"`
}

// peekIndex reads the index from the embedded files: a YAML decode of a
// few fields of each, no validation and no jq.
func peekIndex() ([]indexEntry, error) {
	entries, err := files.ReadDir("kartas")
	if err != nil {
		return nil, err
	}
	out := make([]indexEntry, 0, len(entries))
	for _, e := range entries {
		file := path.Join("kartas", e.Name())
		data, err := files.ReadFile(file)
		if err != nil {
			return nil, err
		}
		var pk peek
		if err := yaml.Unmarshal(data, &pk); err != nil {
			return nil, fmt.Errorf("builtin/%s: %w", file, err)
		}
		root := pk.Spec.StructureDefinition.RootComponent
		if pk.Metadata.Name == "" || root == nil || root.Kind == nil {
			return nil, fmt.Errorf("builtin/%s: a built-in needs metadata.name and the root component's kind", file)
		}
		out = append(out, indexEntry{name: pk.Metadata.Name, gvk: root.Kind.GVK(), file: file})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// load loads and checks the entry's file once; a broken embedded file is
// a build defect reported here.
func (x *indexed) load() (*Builtin, error) {
	x.once.Do(func() {
		data, err := files.ReadFile(x.file)
		if err != nil {
			x.err = err
			return
		}
		ks, err := karta.Load(data, "builtin/"+x.file)
		if err != nil {
			x.err = err
			return
		}
		if len(ks) != 1 || ks[0].Name != x.name {
			x.err = fmt.Errorf("builtin/%s: holds %d Kartas; a built-in file holds exactly one, named %q", x.file, len(ks), x.name)
			return
		}
		b := &Builtin{Name: x.name, Karta: ks[0]}
		src, ok, err := scripts.For(x.name)
		if err != nil {
			x.err = err
			return
		}
		if ok {
			b.Script = src
		}
		x.b = b
	})
	return x.b, x.err
}

// All returns every built-in, sorted by name, loading and checking each
// (once).
func All() ([]*Builtin, error) {
	idx, err := catalog()
	if err != nil {
		return nil, err
	}
	out := make([]*Builtin, 0, len(idx))
	for _, x := range idx {
		b, err := x.load()
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// Get returns the built-in of a name, loading only that one.
func Get(name string) (*Builtin, bool, error) {
	idx, err := catalog()
	if err != nil {
		return nil, false, err
	}
	for _, x := range idx {
		if x.name == name {
			b, err := x.load()
			return b, err == nil, err
		}
	}
	return nil, false, nil
}

// Names lists the built-ins' names.
func Names() []string {
	idx, _ := catalog()
	names := make([]string, len(idx))
	for i, x := range idx {
		names[i] = x.name
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

// Registry registers every built-in by the GVK of its root component. Each
// is loaded and compiled on first use, so a process that asks for one kind
// pays for that one (Registry.CompileAll compiles them all now). Two
// built-ins that claim one GVK are an error here.
func Registry(opts interpreter.Options) (*interpreter.Registry, error) {
	idx, err := catalog()
	if err != nil {
		return nil, err
	}
	return registryFrom(idx, opts)
}

func registryFrom(idx []*indexed, opts interpreter.Options) (*interpreter.Registry, error) {
	r := interpreter.NewRegistry()
	claimed := map[schema.GroupVersionKind]string{}
	for _, x := range idx {
		if other, dup := claimed[x.gvk]; dup {
			return nil, fmt.Errorf("built-ins %q and %q both claim %s", other, x.name, x.gvk)
		}
		claimed[x.gvk] = x.name
		x := x
		r.PutLazy(x.gvk, x.name, func() (*interpreter.Program, error) {
			b, err := x.load()
			if err != nil {
				return nil, err
			}
			return b.Compile(opts)
		})
	}
	return r, nil
}
