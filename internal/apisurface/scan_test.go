package apisurface

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/kartalua/karta/"

// pkgSource is one directory's parsed files.
type pkgSource struct {
	name  string // the package name of its non-test files
	files []*ast.File
	tests []*ast.File
}

// parseModule parses every Go file of the module under root, by directory
// relative to root. Vendored code (internal/third_party) and testdata are
// not the module's own API. The test modules under test/ (the chart's,
// Karmada's client, the benchmarks) are parsed too: they use karta's
// public API as an embedder would, so what they use is used.
func parseModule(t *testing.T, root string) map[string]*pkgSource {
	t.Helper()
	fset := token.NewFileSet()
	pkgs := map[string]*pkgSource{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "third_party" || d.Name() == "bin") {
				return filepath.SkipDir
			}
			if p != root && fileExists(filepath.Join(p, "go.mod")) && !underTest(root, p) {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		dir, _ := filepath.Rel(root, filepath.Dir(p))
		dir = filepath.ToSlash(dir)
		ps := pkgs[dir]
		if ps == nil {
			ps = &pkgSource{}
			pkgs[dir] = ps
		}
		if strings.HasSuffix(p, "_test.go") {
			ps.tests = append(ps.tests, f)
		} else {
			ps.files = append(ps.files, f)
			ps.name = f.Name.Name
		}
		return nil
	})
	require.NoError(t, err)
	return pkgs
}

// underTest reports whether dir is under root's test/ folder, whose
// packages use the API and are none of it.
func underTest(root, dir string) bool {
	rel, err := filepath.Rel(root, dir)
	return err == nil && strings.HasPrefix(filepath.ToSlash(rel)+"/", "test/")
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// public reports whether dir is a package embedders may import.
func public(dir string, p *pkgSource) bool {
	if p.name == "" || p.name == "main" {
		return false
	}
	if strings.HasPrefix(dir+"/", "test/") {
		return false
	}
	for _, part := range strings.Split(dir, "/") {
		if part == "internal" || part == "examples" {
			return false
		}
	}
	return true
}

// surface is what the scan finds in one public package.
type surface struct {
	exported map[string]bool
	// mentions are the package's exported identifiers each declaration
	// names (a type's fields and methods' signatures, a function's
	// signature).
	mentions map[string][]string
	// typeOf is a constant's or variable's declared type, when it is one
	// of the package's own named types.
	typeOf map[string]string
}

func scanSurface(p *pkgSource) *surface {
	s := &surface{exported: map[string]bool{}, mentions: map[string][]string{}, typeOf: map[string]string{}}
	named := func(n ast.Node) []string {
		var ids []string
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				return false // another package's identifier
			case *ast.Ident:
				if n.IsExported() {
					ids = append(ids, n.Name)
				}
			}
			return true
		})
		return ids
	}
	for _, f := range p.files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					s.exported[d.Name.Name] = true
					s.mentions[d.Name.Name] = append(s.mentions[d.Name.Name], named(d.Type)...)
					continue
				}
				if recv := receiverName(d.Recv.List[0].Type); recv != "" {
					s.mentions[recv] = append(s.mentions[recv], named(d.Type)...)
				}
			case *ast.GenDecl:
				last := ""
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						if sp.Name.IsExported() {
							s.exported[sp.Name.Name] = true
						}
						s.mentions[sp.Name.Name] = append(s.mentions[sp.Name.Name], named(sp.Type)...)
					case *ast.ValueSpec:
						if sp.Type != nil {
							last = ""
							if id, ok := sp.Type.(*ast.Ident); ok {
								last = id.Name
							}
						}
						for _, n := range sp.Names {
							if !n.IsExported() {
								continue
							}
							s.exported[n.Name] = true
							if last != "" {
								s.typeOf[n.Name] = last
							}
						}
					}
				}
			}
		}
	}
	return s
}

func receiverName(e ast.Expr) string {
	if st, ok := e.(*ast.StarExpr); ok {
		e = st.X
	}
	switch x := e.(type) {
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// usedFromOutside returns, per public package directory, the identifiers
// other packages of the module (their tests, commands and examples
// included) select from it.
func usedFromOutside(pkgs map[string]*pkgSource) map[string]map[string]bool {
	used := map[string]map[string]bool{}
	for dir, p := range pkgs {
		for _, f := range append(append([]*ast.File(nil), p.files...), p.tests...) {
			names := map[string]string{} // local name → imported directory
			for _, im := range f.Imports {
				path := strings.Trim(im.Path.Value, `"`)
				target, ok := strings.CutPrefix(path, module)
				if !ok || pkgs[target] == nil {
					continue
				}
				name := pkgs[target].name
				if im.Name != nil {
					name = im.Name.Name
				}
				names[name] = target
			}
			ast.Inspect(f, func(n ast.Node) bool {
				se, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				x, ok := se.X.(*ast.Ident)
				if !ok {
					return true
				}
				if target, ok := names[x.Name]; ok && target != dir {
					if used[target] == nil {
						used[target] = map[string]bool{}
					}
					used[target][se.Sel.Name] = true
				}
				return true
			})
		}
	}
	return used
}

// unjustified lists, as "dir.Name", the exported identifiers of public
// packages that nothing justifies (see the package comment).
func unjustified(pkgs map[string]*pkgSource) []string {
	used := usedFromOutside(pkgs)
	var out []string
	for dir, p := range pkgs {
		if !public(dir, p) {
			continue
		}
		s := scanSurface(p)
		ok := map[string]bool{}
		var queue []string
		for id := range s.exported {
			// Used from outside, or an error type or sentinel that callers
			// branch on with errors.As/Is: public, with what it names.
			if used[dir][id] || strings.HasSuffix(id, "Error") || strings.HasPrefix(id, "Err") {
				ok[id] = true
				queue = append(queue, id)
			}
		}
		for len(queue) > 0 {
			id := queue[0]
			queue = queue[1:]
			for _, m := range s.mentions[id] {
				if s.exported[m] && !ok[m] {
					ok[m] = true
					queue = append(queue, m)
				}
			}
		}
		for id := range s.exported {
			switch {
			case ok[id]:
			case ok[s.typeOf[id]]:
				// A value of a type that is part of the API (an enum's members).
			default:
				out = append(out, dir+"."+id)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestPublicIdentifiersAreUsed: every exported identifier of a public
// package is used outside it, or is listed in publicByDesign with the
// reason it is public. An entry that is no longer needed fails too, so the
// list stays true.
func TestPublicIdentifiersAreUsed(t *testing.T) {
	pkgs := parseModule(t, filepath.Join("..", ".."))
	require.Contains(t, pkgs, "interpreter", "the module was found")
	found := unjustified(pkgs)
	var unexplained, stale []string
	inFound := map[string]bool{}
	for _, id := range found {
		inFound[id] = true
		if publicByDesign[id] == "" {
			unexplained = append(unexplained, id)
		}
	}
	for id := range publicByDesign {
		if !inFound[id] {
			stale = append(stale, id)
		}
	}
	sort.Strings(stale)
	if len(unexplained) > 0 {
		t.Errorf("exported but used nowhere outside its package: unexport these, or list them in publicByDesign with the reason:\n  %s", strings.Join(unexplained, "\n  "))
	}
	if len(stale) > 0 {
		t.Errorf("publicByDesign lists identifiers that are now used outside their package (or gone): remove them:\n  %s", strings.Join(stale, "\n  "))
	}
}
