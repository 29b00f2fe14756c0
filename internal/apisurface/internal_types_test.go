package apisurface

import (
	"go/ast"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// internalMentions lists, as "dir.Name: pkg.Type", every place where the
// public API of a public package names a type of one of the module's
// internal packages: an exported function's or method's signature, an
// exported field or interface method of an exported type, an exported
// variable's or constant's declared type. A type alias is the deliberate
// public name of the type it stands for and is not listed.
func internalMentions(pkgs map[string]*pkgSource) []string {
	var out []string
	for dir, p := range pkgs {
		if !public(dir, p) {
			continue
		}
		for _, f := range p.files {
			internal := map[string]string{} // local name → internal import path
			for _, im := range f.Imports {
				path := strings.Trim(im.Path.Value, `"`)
				if !strings.HasPrefix(path, module) || !strings.Contains(path+"/", "/internal/") {
					continue
				}
				name := path[strings.LastIndex(path, "/")+1:]
				if im.Name != nil {
					name = im.Name.Name
				}
				internal[name] = path
			}
			if len(internal) == 0 {
				continue
			}
			report := func(owner string, n ast.Node) {
				ast.Inspect(n, func(n ast.Node) bool {
					se, ok := n.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					if x, ok := se.X.(*ast.Ident); ok && internal[x.Name] != "" {
						out = append(out, dir+"."+owner+": "+x.Name+"."+se.Sel.Name)
					}
					return false
				})
			}
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if !d.Name.IsExported() {
						continue
					}
					if d.Recv == nil {
						report(d.Name.Name, d.Type)
					} else if recv := receiverName(d.Recv.List[0].Type); ast.IsExported(recv) {
						report(recv+"."+d.Name.Name, d.Type)
					}
				case *ast.GenDecl:
					for _, sp := range d.Specs {
						switch sp := sp.(type) {
						case *ast.TypeSpec:
							if sp.Name.IsExported() && !sp.Assign.IsValid() {
								reportMembers(sp, report)
							}
						case *ast.ValueSpec:
							for _, n := range sp.Names {
								if n.IsExported() && sp.Type != nil {
									report(n.Name, sp.Type)
								}
							}
						}
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// reportMembers reports the exported fields (and embedded types) of a
// struct type and the methods of an interface type; any other type is
// reported whole.
func reportMembers(sp *ast.TypeSpec, report func(owner string, n ast.Node)) {
	var fields *ast.FieldList
	switch t := sp.Type.(type) {
	case *ast.StructType:
		fields = t.Fields
	case *ast.InterfaceType:
		fields = t.Methods
	default:
		report(sp.Name.Name, sp.Type)
		return
	}
	for _, fl := range fields.List {
		if len(fl.Names) == 0 {
			report(sp.Name.Name, fl.Type) // embedded: its members are promoted
			continue
		}
		for _, n := range fl.Names {
			if n.IsExported() {
				report(sp.Name.Name+"."+n.Name, fl.Type)
			}
		}
	}
}

// TestNoInternalTypesInPublicSignatures: an embedder can neither name nor
// build a type of an internal package, so the public API never asks for
// one or hands one out (issue 30); where an adapter of the module needs
// more than the public API gives, the type is the public API's own.
func TestNoInternalTypesInPublicSignatures(t *testing.T) {
	pkgs := parseModule(t, filepath.Join("..", ".."))
	require.Contains(t, pkgs, "interpreter", "the module was found")
	assert.Empty(t, internalMentions(pkgs), "public API naming internal packages' types")
}
