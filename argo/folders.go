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

// folder is a customization folder: one holding health.lua or
// health_test.yaml.
type folder struct {
	// rel is the folder relative to the test directory, with slashes:
	// "<group>/<Kind>", "<Kind>", or "." for the directory itself.
	rel                string
	hasScript, hasTest bool
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
	src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.scriptPath())))
	if err != nil {
		f.err = fmt.Errorf("%s: %w", f.scriptPath(), cleanPathError(err))
		return
	}
	f.script, f.err = Compile(f.scriptPath(), string(src))
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
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || (d.Name() != healthFile && d.Name() != healthTestFile) {
			return nil
		}
		rel, err := filepath.Rel(dir, filepath.Dir(p))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		f := byRel[rel]
		if f == nil {
			f = &folder{rel: rel}
			byRel[rel] = f
			folders = append(folders, f)
		}
		if d.Name() == healthFile {
			f.hasScript = true
		} else {
			f.hasTest = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(folders) == 0 {
		return nil, fmt.Errorf("%s: no %s or %s found (want <group>/<Kind>/%s beside %s)", dir, healthFile, healthTestFile, healthFile, healthTestFile)
	}
	return folders, nil
}

// pick returns the folder whose health.lua Argo CD runs for group/kind:
// the exact folder, else the first wildcard folder that matches; nil when
// none does.
func pick(folders []*folder, group, kind string) *folder {
	if kind == "" {
		return nil
	}
	key := kind
	if group != "" {
		key = group + "/" + kind
	}
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

// matchKey matches a folder path against a group/kind key name by name: a
// "_" matches any run of characters within one name, never a "/".
func matchKey(pattern, key string) bool {
	ps, ks := strings.Split(pattern, "/"), strings.Split(key, "/")
	if len(ps) != len(ks) {
		return false
	}
	for i := range ps {
		if !matchName(ps[i], ks[i]) {
			return false
		}
	}
	return true
}

// matchName is glob matching where "_" is the only wildcard (Argo CD's
// stand-in for "*", which folder names cannot hold on every system). It
// backtracks to the last wildcard on a mismatch: linear for one wildcard,
// and names are short.
func matchName(pattern, name string) bool {
	p, n := 0, 0
	star, resume := -1, 0
	for n < len(name) {
		switch {
		case p < len(pattern) && pattern[p] == '_':
			star, resume = p, n
			p++
		case p < len(pattern) && pattern[p] == name[n]:
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
