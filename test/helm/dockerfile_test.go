package helm

import (
	"debug/elf"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case: FROM, RUN, ...
	args string
}

// parseDockerfile reads the instructions of a Dockerfile: comments and
// blank lines dropped, lines ending in a backslash joined.
func parseDockerfile(t *testing.T, text string) []instruction {
	t.Helper()
	var out []instruction
	var cur strings.Builder
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if cont, ok := strings.CutSuffix(trimmed, "\\"); ok {
			cur.WriteString(cont + " ")
			continue
		}
		cur.WriteString(trimmed)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{cmd: strings.ToUpper(cmd), args: strings.Join(strings.Fields(args), " ")})
		cur.Reset()
	}
	require.Zero(t, cur.Len(), "the Dockerfile ends in a continuation line")
	return out
}

// stages splits the instructions at each FROM; the ARGs before the first
// FROM are stage -1's.
func stages(ins []instruction) (global []instruction, st [][]instruction) {
	for _, in := range ins {
		switch {
		case in.cmd == "FROM":
			st = append(st, []instruction{in})
		case len(st) == 0:
			global = append(global, in)
		default:
			st[len(st)-1] = append(st[len(st)-1], in)
		}
	}
	return global, st
}

func only(t *testing.T, ins []instruction, cmd string) []instruction {
	t.Helper()
	var out []instruction
	for _, in := range ins {
		if in.cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// The image recipe: a multi-stage build of a static karta, stamped with its
// version and commit, on a minimal base, as a non-root user, with karta as
// the entrypoint. The machine that runs the tests cannot pull base images,
// so this checks the recipe's invariants; `make image` builds it.
func TestDockerfile(t *testing.T) {
	ins := parseDockerfile(t, string(readRepoFile(t, "Dockerfile")))
	global, st := stages(ins)
	require.GreaterOrEqual(t, len(st), 2, "a multi-stage build")
	build, final := st[0], st[len(st)-1]

	// The builder's Go is at least go.mod's.
	goMod := string(readRepoFile(t, "go.mod"))
	want := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(goMod)
	require.NotNil(t, want, "go.mod's go directive")
	var goVersion string
	for _, a := range only(t, global, "ARG") {
		if v, ok := strings.CutPrefix(a.args, "GO_VERSION="); ok {
			goVersion = v
		}
	}
	require.NotEmpty(t, goVersion, "ARG GO_VERSION before the first FROM")
	assert.GreaterOrEqual(t, compareGoVersions(goVersion, want[1]), 0, "ARG GO_VERSION=%s is older than go.mod's go %s", goVersion, want[1])
	assert.Regexp(t, `^--platform=\$BUILDPLATFORM golang:\$\{GO_VERSION\} AS build$`, build[0].args)

	// The build: static, reproducible paths, version and commit stamped.
	var goBuild string
	for _, r := range only(t, build, "RUN") {
		if strings.Contains(r.args, "go build") {
			goBuild = r.args
		}
	}
	require.NotEmpty(t, goBuild, "a RUN with go build in the build stage")
	for _, frag := range []string{"CGO_ENABLED=0", "-trimpath", "-X main.version=${VERSION}", "-X main.commit=${COMMIT}", "-o /out/karta ./cmd/karta"} {
		assert.Contains(t, goBuild, frag)
	}
	args := map[string]bool{}
	for _, a := range only(t, build, "ARG") {
		name, _, _ := strings.Cut(a.args, "=")
		args[name] = true
	}
	for _, a := range []string{"VERSION", "COMMIT", "TARGETOS", "TARGETARCH"} {
		assert.True(t, args[a], "ARG %s in the build stage", a)
	}
	assert.Contains(t, goBuild, "GOOS=${TARGETOS} GOARCH=${TARGETARCH}", "cross-compiles for the target platform")

	// The final image: minimal, the binary alone, non-root, karta as entrypoint.
	base := strings.Fields(final[0].args)[0]
	assert.Regexp(t, `^(scratch|gcr\.io/distroless/static(-debian\d+)?:nonroot)$`, base)
	copies := only(t, final, "COPY")
	require.Len(t, copies, 1, "the final stage copies the binary alone")
	assert.Equal(t, "--from=build /out/karta /karta", copies[0].args)
	assert.Empty(t, only(t, final, "RUN"), "nothing runs in the final stage (it has no shell)")
	users := only(t, final, "USER")
	require.Len(t, users, 1)
	uid, _, _ := strings.Cut(users[0].args, ":")
	n, err := strconv.Atoi(uid)
	require.NoError(t, err, "USER is numeric, so that runAsNonRoot can check it")
	assert.NotZero(t, n, "USER is not root")
	entry := only(t, final, "ENTRYPOINT")
	require.Len(t, entry, 1)
	assert.Equal(t, `["/karta"]`, entry[0].args, "exec form, karta itself")
	assert.Empty(t, only(t, final, "CMD"), "the chart gives the arguments")
}

// The -X flags of the Dockerfile and of make build name string variables
// of package main that `karta version` prints.
func TestStampedVariablesExist(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(repoRoot, "cmd/karta/*.go"))
	require.NoError(t, err)
	vars := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				spec := s.(*ast.ValueSpec)
				for i, name := range spec.Names {
					if i < len(spec.Values) {
						if lit, ok := spec.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							vars[name.Name] = true
						}
					}
				}
			}
		}
	}
	xflag := regexp.MustCompile(`-X main\.(\w+)=`)
	for _, file := range []string{"Dockerfile", "Makefile"} {
		found := xflag.FindAllStringSubmatch(string(readRepoFile(t, file)), -1)
		require.Len(t, found, 2, "%s stamps the version and the commit", file)
		for _, m := range found {
			assert.True(t, vars[m[1]], "%s: -X main.%s names no string variable of package main", file, m[1])
		}
	}
}

// The build context keeps every directory of the packages karta is built
// from: .dockerignore drops only what the build does not read.
func TestDockerignore(t *testing.T) {
	var ignored []string
	for _, line := range strings.Split(string(readRepoFile(t, ".dockerignore")), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			ignored = append(ignored, line)
		}
	}
	require.Contains(t, ignored, ".git", "the repository's history stays out of the image's context")
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}{{range .EmbedFiles}} {{$.Dir}}/{{.}}{{end}}{{end}}", "./cmd/karta")
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	root, err := filepath.Abs(repoRoot)
	require.NoError(t, err)
	checked := 0
	for _, path := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, path)
		require.NoError(t, err)
		if strings.HasPrefix(rel, "..") {
			continue // a module outside the repository
		}
		checked++
		for _, pattern := range ignored {
			// "name" is a path from the context's root; "**/name" a name at any depth.
			anyDepth, deep := strings.CutPrefix(pattern, "**/")
			for p := rel; p != "."; p = filepath.Dir(p) {
				hit := p == pattern
				if deep {
					hit, err = filepath.Match(anyDepth, filepath.Base(p))
					require.NoError(t, err)
				}
				if hit {
					t.Errorf(".dockerignore's %q drops %s, which karta is built from", pattern, rel)
				}
			}
		}
	}
	assert.Greater(t, checked, 10, "karta's own packages were listed")
}

// make build gives what the image has: a static binary that prints the
// stamped version and commit.
func TestMakeBuild(t *testing.T) {
	bin := buildKarta(t)
	out, err := exec.Command(bin, "version", "-o", "table").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "karta "+stampVersion+" (commit "+stampCommit+", "+runtime.Version()+", "+runtime.GOOS+"/"+runtime.GOARCH+")\n", string(out))

	if runtime.GOOS == "linux" {
		f, err := elf.Open(bin)
		require.NoError(t, err)
		defer func() { _ = f.Close() }()
		for _, p := range f.Progs {
			assert.NotEqual(t, elf.PT_INTERP, p.Type, "static: no dynamic loader")
		}
	}
}

// compareGoVersions compares two Go versions such as 1.26 and 1.26.8.
func compareGoVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(pa), len(pb)); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			return x - y
		}
	}
	return 0
}
