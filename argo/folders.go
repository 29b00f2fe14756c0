package argo

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// The files of Argo CD's resource-customization layout.
const (
	healthFile     = "health.lua"
	healthTestFile = "health_test.yaml"
	actionsDir     = "actions"
	discoveryFile  = "discovery.lua"
	actionFile     = "action.lua"
	actionTestFile = "action_test.yaml"
)

// folder is a customization folder <group>/<Kind>: one holding health.lua
// or health_test.yaml, or an actions/ folder with discovery.lua or
// action_test.yaml.
type folder struct {
	// rel is the folder relative to the directory, with slashes:
	// "<group>/<Kind>", "<Kind>", or "." for the directory itself.
	rel                string
	hasScript, hasTest bool
	// hasDiscovery and hasActionTest: actions/discovery.lua and
	// actions/action_test.yaml.
	hasDiscovery, hasActionTest bool
	// script is the compiled health.lua, or err why it is not usable.
	script *Script
	err    error
}

func (f *folder) scriptPath() string { return path.Join(f.rel, healthFile) }

// wildcard reports whether the folder's name matches group/kind keys by
// pattern rather than literally.
func (f *folder) wildcard() bool { return f.rel != "." && strings.Contains(f.rel, "_") }

// compile reads and compiles health.lua once, however many tests use it.
func (f *folder) compile(dir string) {
	if !f.hasScript || f.script != nil || f.err != nil {
		return
	}
	f.script, f.err = compileFile(dir, f.scriptPath())
}

// compileFile compiles the script at rel (slashes) under dir, named rel.
func compileFile(dir, rel string) (*Script, error) {
	src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, cleanPathError(err))
	}
	return Compile(rel, string(src))
}

// findFolders walks dir for customization folders, in walk (lexical)
// order: the order in which Argo CD tries wildcard folders.
func findFolders(dir string) ([]*folder, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, &fs.PathError{Op: "walk", Path: dir, Err: syscall.ENOTDIR}
	}
	var folders []*folder
	byRel := map[string]*folder{}
	get := func(rel string) *folder {
		f := byRel[rel]
		if f == nil {
			f = &folder{rel: rel}
			byRel[rel] = f
			folders = append(folders, f)
		}
		return f
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, filepath.Dir(p))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch d.Name() {
		case healthFile:
			get(rel).hasScript = true
		case healthTestFile:
			get(rel).hasTest = true
		case discoveryFile, actionTestFile:
			if path.Base(rel) != actionsDir {
				return nil
			}
			f := get(path.Dir(rel))
			if d.Name() == discoveryFile {
				f.hasDiscovery = true
			} else {
				f.hasActionTest = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(folders) == 0 {
		return nil, fmt.Errorf("%s: no %s, %s or %s/%s found (want <group>/<Kind>/%s beside %s)", dir, healthFile, healthTestFile, actionsDir, actionTestFile, healthFile, healthTestFile)
	}
	return folders, nil
}

// configKey is Argo CD's key of a kind: <group>/<Kind>, or <Kind> for the
// core group.
func configKey(group, kind string) string {
	if group == "" {
		return kind
	}
	return group + "/" + kind
}

// pick returns the folder whose health.lua Argo CD runs for group/kind:
// the exact folder, else the first wildcard folder that matches; nil when
// none does.
func pick(folders []*folder, group, kind string) *folder {
	if kind == "" {
		return nil
	}
	key := configKey(group, kind)
	for _, f := range folders {
		if f.hasScript && f.rel == key {
			return f
		}
	}
	for _, f := range folders {
		if f.hasScript && f.wildcard() && matchKey(f.rel, key) {
			return f
		}
	}
	return nil
}

// exact returns the folder named by group/kind, nil when there is none:
// Argo CD looks actions up by the exact key only.
func exact(folders []*folder, group, kind string) *folder {
	if kind == "" {
		return nil
	}
	key := configKey(group, kind)
	for _, f := range folders {
		if f.rel == key {
			return f
		}
	}
	return nil
}

// matchKey is glob matching of a folder path against a group/kind key,
// where "_" (Argo CD's stand-in for "*", which folder names cannot hold on
// every system) matches any run of characters, a "/" included, as Argo
// CD's glob.Match without separators does. It backtracks to the last
// wildcard on a mismatch: linear for one wildcard, and keys are short.
func matchKey(pattern, key string) bool {
	p, n := 0, 0
	star, resume := -1, 0
	for n < len(key) {
		switch {
		case p < len(pattern) && pattern[p] == '_':
			star, resume = p, n
			p++
		case p < len(pattern) && pattern[p] == key[n]:
			p++
			n++
		case star >= 0:
			resume++
			p, n = star+1, resume
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '_' {
		p++
	}
	return p == len(pattern)
}
