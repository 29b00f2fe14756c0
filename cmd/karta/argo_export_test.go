package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/argo"
)

// Every built-in exports to Argo CD, and its export gives, on every
// example, the statuses karta computes in process: through karta argo
// test (the exported tests hold the in-process results), through the
// in-process Argo CD runner, and in a plain gopher-lua state opened as
// Argo CD opens one for a built-in script (every standard library).
func TestArgoExportEveryBuiltin(t *testing.T) {
	reg, err := builtinRegistry()
	require.NoError(t, err)
	ctx := context.Background()
	for _, p := range reg.List() {
		t.Run(p.Name(), func(t *testing.T) {
			examples := filepath.Join("../../examples", p.Name())
			files, _, err := argoFolder(ctx, p, examples)
			require.NoError(t, err)
			dir := t.TempDir()
			for name, data := range files {
				f := filepath.Join(dir, filepath.FromSlash(name))
				require.NoError(t, os.MkdirAll(filepath.Dir(f), 0o755))
				require.NoError(t, os.WriteFile(f, data, 0o644))
			}

			rep, err := argo.RunTestDir(ctx, dir)
			require.NoError(t, err)
			for _, r := range rep.Results {
				assert.True(t, r.OK(), "%s: want %v, got %v, err %v, %v", r.Name, r.Want, r.Got, r.Err, r.Mismatches)
			}
			assert.Empty(t, rep.Problems)
			assert.Zero(t, rep.Failed)

			objs, err := exampleObjects(p, examples)
			require.NoError(t, err)
			require.NotEmpty(t, objs, "every built-in has examples")
			healthTests := 0
			for _, r := range rep.Results {
				if r.Kind == argo.TestHealth {
					healthTests++
				}
			}
			assert.Equal(t, len(objs), healthTests, "one health test per example")

			ex, err := argo.ExportProgram(p)
			require.NoError(t, err)
			src := ex.Scripts["health.lua"]
			script, err := argo.Compile("health.lua", src)
			require.NoError(t, err)
			words := argo.HealthWords(argo.IsBatch(p.Karta()))
			for _, o := range objs {
				st, err := p.InterpretStatus(ctx, &unstructured.Unstructured{Object: o.obj})
				require.NoError(t, err, o.name)
				want := argo.Health{}
				if w, ok := words[st.Status]; ok {
					want = argo.Health{Status: w, Message: argo.HealthMessage(st.Conditions)}
				}
				got, err := script.Run(ctx, o.obj)
				require.NoError(t, err, o.name)
				assert.Equal(t, want, got, "%s: in-process runner (karta status %s)", o.name, st.Status)
				assert.Equal(t, want, plainGopherLua(t, src, o.obj), "%s: plain gopher-lua", o.name)
			}
		})
	}
}

// plainGopherLua runs a health script as Argo CD's VM does for a built-in
// script: a new gopher-lua state with every library, obj decoded as
// Argo CD decodes it, the last value returned read as JSON.
func plainGopherLua(t *testing.T, src string, obj map[string]any) argo.Health {
	t.Helper()
	L := lua.NewState()
	defer L.Close()
	var decode func(v any) lua.LValue
	decode = func(v any) lua.LValue {
		switch x := v.(type) {
		case bool:
			return lua.LBool(x)
		case string:
			return lua.LString(x)
		case json.Number:
			f, err := x.Float64()
			require.NoError(t, err)
			return lua.LNumber(f)
		case []any:
			tb := L.CreateTable(len(x), 0)
			for _, e := range x {
				tb.Append(decode(e))
			}
			return tb
		case map[string]any:
			tb := L.CreateTable(0, len(x))
			for k, e := range x {
				tb.RawSetH(lua.LString(k), decode(e))
			}
			return tb
		case int64:
			return lua.LNumber(x)
		case float64:
			return lua.LNumber(x)
		}
		return lua.LNil
	}
	L.SetGlobal("obj", decode(obj))
	require.NoError(t, L.DoString(src))
	v := L.Get(-1)
	if v == lua.LNil {
		return argo.Health{}
	}
	tb, ok := v.(*lua.LTable)
	require.True(t, ok, "a table, got %s", v.Type())
	h := argo.Health{}
	if s, ok := tb.RawGetString("status").(lua.LString); ok {
		h.Status = string(s)
	}
	if s, ok := tb.RawGetString("message").(lua.LString); ok {
		h.Message = string(s)
	}
	return h
}

func TestArgoExportCommand(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := runCLI(t, "", "argo", "export", "-k", "jobset", "--dir", dir, "--examples", "../../examples/jobset")
	require.Equal(t, exitOK, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	assert.Contains(t, lines, filepath.ToSlash(filepath.Join(dir, "jobset.x-k8s.io/JobSet/health.lua")))
	assert.Contains(t, lines, filepath.ToSlash(filepath.Join(dir, "jobset.x-k8s.io/JobSet/actions/suspend/action.lua")))
	stdout, stderr, code = runCLI(t, "", "argo", "test", dir)
	require.Equal(t, exitOK, code, stderr)
	assert.True(t, strings.HasSuffix(stdout, " passed, 0 failed\n"), stdout)

	stdout, stderr, code = runCLI(t, "", "argo", "export", "-k", "jobset", "-o", "argocd-cm", "--examples", "../../examples/jobset")
	require.Equal(t, exitOK, code, stderr)
	var cm struct {
		Kind string            `json:"kind"`
		Data map[string]string `json:"data"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(stdout), &cm))
	assert.Equal(t, "ConfigMap", cm.Kind)
	assert.Contains(t, cm.Data["resource.customizations.health.jobset.x-k8s.io_JobSet"], "local status, word = statusOf(obj), nil")
	assert.Equal(t, "true", cm.Data["resource.customizations.useOpenLibs.jobset.x-k8s.io_JobSet"])
	var actions struct {
		Discovery   string `json:"discovery.lua"`
		Definitions []struct {
			Name      string `json:"name"`
			ActionLua string `json:"action.lua"`
		} `json:"definitions"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(cm.Data["resource.customizations.actions.jobset.x-k8s.io_JobSet"]), &actions))
	assert.Contains(t, actions.Discovery, `actions["suspend"]`)
	require.Len(t, actions.Definitions, 2)
	assert.Equal(t, "resume", actions.Definitions[0].Name)
	assert.Contains(t, actions.Definitions[1].ActionLua, `t["suspend"] = true`)

	_, stderr, code = runCLI(t, "", "argo", "export", "-k", "jobset", "-o", "json")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "-o json: unknown output format (want argocd-cm)")
}
