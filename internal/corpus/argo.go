package corpus

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// DefaultArgoCorpusDirs are karta's own directories in Argo CD's
// resource-customization layout, relative to a package directory of the
// repository: the customizations `karta argo test` is tested on (health
// scripts of every chunk form, wildcard folders, actions of both styles
// with discovery and parameters) and the bundled exports of the built-ins
// (health, suspend and resume).
var DefaultArgoCorpusDirs = []string{
	filepath.Join("..", "..", "cmd", "karta", "testdata", "argo", "customizations"),
	filepath.Join("..", "..", "scripts", "argocd"),
}

// ArgoOp is what an Argo corpus case runs.
type ArgoOp string

// The operations of the Argo corpus: a health_test.yaml test, an
// action_test.yaml discovery test and an action test.
const (
	ArgoHealth    ArgoOp = "Health"
	ArgoDiscovery ArgoOp = "Discovery"
	ArgoAction    ArgoOp = "Action"
)

// ArgoOps are the operations in the order they are reported.
var ArgoOps = []ArgoOp{ArgoHealth, ArgoDiscovery, ArgoAction}

// ArgoCase is one test of the corpus: a script, the object it runs on
// (client-go's form) and, for an action, its parameters.
type ArgoCase struct {
	Op ArgoOp
	// Dir is the corpus directory; Script and Input are relative to it,
	// with slashes.
	Dir, Script, Input string
	// Source is the script's text.
	Source string
	Object *unstructured.Unstructured
	Params map[string]string
	// WantError is an action test's expectedErrorMessage.
	WantError string
}

// Name is the script and the input, unique within the corpus.
func (c *ArgoCase) Name() string {
	return filepath.Base(c.Dir) + ":" + c.Script + "#" + c.Input
}

type argoHealthTests struct {
	Tests []struct {
		InputPath string `json:"inputPath"`
	} `json:"tests"`
}

type argoActionTests struct {
	DiscoveryTests []struct {
		InputPath string `json:"inputPath"`
	} `json:"discoveryTests"`
	ActionTests []struct {
		Action               string            `json:"action"`
		InputPath            string            `json:"inputPath"`
		ExpectedErrorMessage string            `json:"expectedErrorMessage"`
		Parameters           map[string]string `json:"parameters"`
	} `json:"actionTests"`
}

// LoadArgoCorpus reads every test of the health_test.yaml and
// actions/action_test.yaml files under dirs. A test's script is the one of
// the folder named by its object's group and kind when there is one (the
// exact match Argo CD tries first), else the one of the test's own folder
// (a wildcard folder's).
func LoadArgoCorpus(dirs ...string) ([]*ArgoCase, error) {
	var out []*ArgoCase
	for _, dir := range dirs {
		l := &argoLoader{dir: dir, sources: map[string]string{}}
		var tests []string
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && (d.Name() == "health_test.yaml" || d.Name() == "action_test.yaml") {
				tests = append(tests, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(tests)
		for _, t := range tests {
			rel, err := filepath.Rel(dir, t)
			if err != nil {
				return nil, err
			}
			cases, err := l.load(filepath.ToSlash(rel))
			if err != nil {
				return nil, err
			}
			out = append(out, cases...)
		}
	}
	return out, nil
}

type argoLoader struct {
	dir     string
	sources map[string]string
}

func (l *argoLoader) load(testFile string) ([]*ArgoCase, error) {
	data, err := os.ReadFile(l.file(testFile))
	if err != nil {
		return nil, err
	}
	testDir := path.Dir(testFile)
	var out []*ArgoCase
	if path.Base(testFile) == "health_test.yaml" {
		var tf argoHealthTests
		if err := yaml.Unmarshal(data, &tf); err != nil {
			return nil, fmt.Errorf("%s: %w", testFile, err)
		}
		for _, t := range tf.Tests {
			c, err := l.newCase(ArgoHealth, testDir, t.InputPath, func(folder string) string { return path.Join(folder, "health.lua") })
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	}
	// actions/action_test.yaml: its scripts are under <folder>/actions.
	var tf argoActionTests
	if err := yaml.Unmarshal(data, &tf); err != nil {
		return nil, fmt.Errorf("%s: %w", testFile, err)
	}
	for _, t := range tf.DiscoveryTests {
		c, err := l.newCase(ArgoDiscovery, testDir, t.InputPath, func(folder string) string { return path.Join(folder, "actions", "discovery.lua") })
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	for _, t := range tf.ActionTests {
		c, err := l.newCase(ArgoAction, testDir, t.InputPath, func(folder string) string { return path.Join(folder, "actions", t.Action, "action.lua") })
		if err != nil {
			return nil, err
		}
		c.Params, c.WantError = t.Parameters, t.ExpectedErrorMessage
		out = append(out, c)
	}
	return out, nil
}

// newCase reads the input at inputPath (relative to testDir) and the
// script script(folder) of the object's exact folder, else of the test's.
func (l *argoLoader) newCase(op ArgoOp, testDir, inputPath string, script func(folder string) string) (*ArgoCase, error) {
	input := path.Join(testDir, inputPath)
	obj, err := LoadObject(l.file(input))
	if err != nil {
		return nil, err
	}
	own := testDir
	if op != ArgoHealth {
		own = path.Dir(testDir)
	}
	key := obj.GetKind()
	if g := obj.GroupVersionKind().Group; g != "" {
		key = g + "/" + key
	}
	rel := script(key)
	if _, err := os.Stat(l.file(rel)); err != nil {
		rel = script(own)
	}
	src, ok := l.sources[rel]
	if !ok {
		b, err := os.ReadFile(l.file(rel))
		if err != nil {
			return nil, err
		}
		src = string(b)
		l.sources[rel] = src
	}
	return &ArgoCase{Op: op, Dir: l.dir, Script: rel, Input: input, Source: src, Object: obj}, nil
}

func (l *argoLoader) file(rel string) string {
	return filepath.Join(l.dir, filepath.FromSlash(strings.TrimPrefix(rel, "./")))
}
