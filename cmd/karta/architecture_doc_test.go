package main

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The package table of docs/architecture.md, checked against the module's
// real import graph (docs/architecture.md, "Packages", says how the table
// is written). Adding a package is adding its row.

const (
	modulePath        = "github.com/kartalua/karta"
	architectureDoc   = "../../docs/architecture.md"
	packageTableStart = "| package | owns | imports (karta's own) |"
	// gojqFork is what the table may call internal/third_party/gojq.
	gojqFork = "the gojq fork"
	// ellipsis ends a prefix: `internal/…` is internal/ and all under it.
	ellipsis = "/…"
)

// notInTable are the packages of the module the table leaves out: the
// examples are programs for the reader, not parts of karta.
var notInTable = []string{"examples" + ellipsis}

// tableRow is one row of the package table.
type tableRow struct {
	line     int
	packages []string // paths relative to the module; a prefix ends in ellipsis
	imports  []string // idem, "" for none
}

// modulePackages is `go list` of the module: each non-test package's
// direct imports of the module's own packages, by path relative to the
// module (test files are left out, as the table is about the code).
func modulePackages(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("go list: %v\n%s", err, ee.Stderr)
	}
	require.NoError(t, err)
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := relPackage(fields[0])
		pkgs[pkg] = []string{}
		for _, imp := range fields[1:] {
			if imp == modulePath || strings.HasPrefix(imp, modulePath+"/") {
				pkgs[pkg] = append(pkgs[pkg], relPackage(imp))
			}
		}
	}
	require.Greater(t, len(pkgs), 20, "go list found the module's packages")
	return pkgs
}

func relPackage(path string) string {
	if path == modulePath {
		return "."
	}
	return strings.TrimPrefix(path, modulePath+"/")
}

var backquoted = regexp.MustCompile("`([^`]+)`")

// readPackageTable parses the table's rows: the package cell's backquoted
// paths, and the imports cell's entries.
func readPackageTable(t *testing.T) []tableRow {
	t.Helper()
	f, err := os.Open(architectureDoc)
	require.NoError(t, err)
	defer f.Close()
	var rows []tableRow
	in, n := false, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case line == packageTableStart:
			in = true
			continue
		case !in:
			continue
		case !strings.HasPrefix(line, "|"):
			in = false
			continue
		case strings.HasPrefix(line, "|---"):
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		require.Len(t, cells, 3, "docs/architecture.md:%d: a row of three cells (no ' | ' inside one)", n)
		row := tableRow{line: n}
		for _, m := range backquoted.FindAllStringSubmatch(cells[0], -1) {
			row.packages = append(row.packages, m[1])
		}
		require.NotEmpty(t, row.packages, "docs/architecture.md:%d: the package cell names a package in backquotes", n)
		row.imports = importEntries(t, n, strings.TrimSpace(cells[2]))
		rows = append(rows, row)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, rows, "docs/architecture.md has the package table")
	return rows
}

// importEntries reads an imports cell: "—" alone, or entries separated by
// commas outside parentheses, each a backquoted path or prefix, or the
// gojq fork, optionally followed by words and a parenthesis saying why.
func importEntries(t *testing.T, line int, cell string) []string {
	t.Helper()
	if cell == "—" {
		return nil
	}
	var entries []string
	for _, entry := range splitOutsideParens(cell) {
		entry = strings.TrimSpace(entry)
		switch m := backquoted.FindStringSubmatchIndex(entry); {
		case strings.HasPrefix(entry, gojqFork):
			entries = append(entries, "internal/third_party/gojq")
		case m != nil && m[0] == 0:
			entries = append(entries, entry[m[2]:m[3]])
		default:
			t.Errorf("docs/architecture.md:%d: import entry %q is neither a backquoted package, a backquoted prefix ending in %q, %q nor —", line, entry, ellipsis, gojqFork)
		}
	}
	return entries
}

func splitOutsideParens(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// covers reports whether the path or prefix p names pkg.
func covers(p, pkg string) bool {
	if prefix, ok := strings.CutSuffix(p, ellipsis); ok {
		return pkg == prefix || strings.HasPrefix(pkg, prefix+"/")
	}
	return p == pkg
}

func coveredBy(ps []string, pkg string) bool {
	for _, p := range ps {
		if covers(p, pkg) {
			return true
		}
	}
	return false
}

// TestArchitecturePackageTable checks docs/architecture.md's package
// table against `go list`: every package of the module has exactly one
// row, every row names packages that exist, and each row's imports are
// exactly the packages of karta its packages import (outside the row).
func TestArchitecturePackageTable(t *testing.T) {
	pkgs := modulePackages(t)
	rows := readPackageTable(t)

	var names []string
	for pkg := range pkgs {
		names = append(names, pkg)
	}
	sort.Strings(names)

	rowOf := map[string]int{}
	for _, pkg := range names {
		if coveredBy(notInTable, pkg) {
			continue
		}
		for _, r := range rows {
			if !coveredBy(r.packages, pkg) {
				continue
			}
			if prev, ok := rowOf[pkg]; ok {
				t.Errorf("package %s has two rows, docs/architecture.md:%d and :%d", pkg, prev, r.line)
			}
			rowOf[pkg] = r.line
		}
		if _, ok := rowOf[pkg]; !ok {
			t.Errorf("package %s has no row in docs/architecture.md's package table", pkg)
		}
	}

	for _, r := range rows {
		// The row's packages and what they import from outside the row.
		var members []string
		imported := map[string]bool{}
		for _, pkg := range names {
			if coveredBy(r.packages, pkg) {
				members = append(members, pkg)
				for _, imp := range pkgs[pkg] {
					imported[imp] = true
				}
			}
		}
		for _, p := range r.packages {
			if !anyCovered(p, members) {
				t.Errorf("docs/architecture.md:%d: %s is no package of the module", r.line, p)
			}
		}
		var actual []string
		for imp := range imported {
			if !coveredBy(r.packages, imp) {
				actual = append(actual, imp)
			}
		}
		sort.Strings(actual)
		for _, imp := range actual {
			if !coveredBy(r.imports, imp) {
				t.Errorf("docs/architecture.md:%d: %v import %s, which the row does not list", r.line, r.packages, imp)
			}
		}
		for _, e := range r.imports {
			if !anyCovered(e, actual) {
				t.Errorf("docs/architecture.md:%d: the row lists %s, which %v do not import (they import %v)", r.line, e, r.packages, actual)
			}
		}
	}
}

func anyCovered(p string, pkgs []string) bool {
	for _, pkg := range pkgs {
		if covers(p, pkg) {
			return true
		}
	}
	return false
}

// TestArchitectureTableNotation pins the notation the table test reads.
func TestArchitectureTableNotation(t *testing.T) {
	entries := []struct {
		cell string
		want []string
	}{
		{"—", nil},
		{"`karta`", []string{"karta"}},
		{"`karta`, `luaapi`, `internal/…`", []string{"karta", "luaapi", "internal/…"}},
		{"`karmada` (counts through `GetComponents`, as `cluster` does), the gojq fork", []string{"karmada", "internal/third_party/gojq"}},
		{"`internal/jqlua` (its output limit), `luaapi` (number conversion)", []string{"internal/jqlua", "luaapi"}},
	}
	for _, tc := range entries {
		require.Equal(t, tc.want, importEntries(t, 0, tc.cell), tc.cell)
	}

	covered := []struct {
		p, pkg string
		want   bool
	}{
		{"karta", "karta", true},
		{"karta", "karta/crd", false},
		{"karta/…", "karta/crd", true},
		{"karta/…", "karta", true},
		{"karta/…", "kartatest", false},
		{"internal/…", "internal/third_party/gojq", true},
		{"internal/…", "luaapi/internal/luapattern", false},
	}
	for _, tc := range covered {
		require.Equal(t, tc.want, covers(tc.p, tc.pkg), "%s covers %s", tc.p, tc.pkg)
	}
}
