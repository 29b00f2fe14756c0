//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/conformance"
	"github.com/kartalua/karta/studio"
)

// The studio's end-to-end test (make test-integration): karta studio in a
// real headless Chromium, driven as a person would — pick a built-in, type
// a broken jq path and see the problem at its line, fix it and see the
// status, paste a multi-document object — with the tree and gang panes
// checked against what karta describe and karta gang answer for the same
// inputs, and screenshots of the main views saved (docs/studio.md shows
// them). Without Chromium it skips, and under CI it fails instead.

// chromiumPath finds the browser: $KARTA_CHROMIUM, else Debian's chromium
// (what .ci/run installs) or another Chromium on PATH.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("KARTA_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium on PATH (apt-get install chromium, or set KARTA_CHROMIUM)"
	if conformance.InCI() {
		t.Fatalf("%s; CI is set, so the studio's browser test fails instead of skipping", msg)
	}
	t.Skipf("%s; skipping (under CI this fails)", msg)
	return ""
}

// artifactsDir is where the screenshots go: $KARTA_TEST_ARTIFACTS/studio,
// else bin/test-artifacts/studio in the repository.
func artifactsDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("KARTA_TEST_ARTIFACTS")
	if root == "" {
		root = filepath.Join("..", "..", "bin", "test-artifacts")
	}
	dir := filepath.Join(root, "studio")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

type browser struct {
	t   *testing.T
	ctx context.Context
	dir string
}

// stepTimeout bounds each step after the first (the first starts the
// browser, whose life a timeout on its context would end).
const stepTimeout = 90 * time.Second

func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	require.NoError(b.t, chromedp.Do(ctx, steps...))
}

func evalJS[T any](b *browser, js string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	require.NoError(b.t, err, js)
	return v
}

// waitFor polls a JavaScript predicate until it holds; what says what the
// test waits for when it does not come, and the text of the elements
// selectors name (the pane waited on) is shown with the page's state.
func (b *browser) waitFor(what, js string, selectors ...string) {
	b.t.Helper()
	_, err := chromedp.Run(b.ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(60*time.Second)))
	if err != nil {
		for _, sel := range selectors {
			what += fmt.Sprintf("; %s says: %q", sel, evalJS[string](b, fmt.Sprintf(`document.querySelector(%q)?.innerText ?? "(none)"`, sel)))
		}
	}
	require.NoError(b.t, err, "waiting for %s (%s); the page says: %s", what, js, evalJS[string](b, `document.getElementById("busy").textContent`))
}

func (b *browser) screenshot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	require.NoError(b.t, err)
	require.NoError(b.t, os.WriteFile(filepath.Join(b.dir, name), png, 0o644))
}

// cli runs karta with args and decodes each JSON document it prints.
func cli(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, streams{in: strings.NewReader(""), out: &out, err: &errOut})
	require.Equal(t, exitOK, code, "karta %s: %s", strings.Join(args, " "), errOut.String())
	var docs []map[string]any
	dec := json.NewDecoder(&out)
	for dec.More() {
		var d map[string]any
		require.NoError(t, dec.Decode(&d))
		docs = append(docs, d)
	}
	return docs
}

// treeNodes lists a describe tree's nodes as "Kind/name", depth first,
// without its gang groups (the gang pane shows those).
func treeNodes(n map[string]any, out []string) []string {
	if n["kind"] == "Group" {
		return out
	}
	out = append(out, fmt.Sprintf("%s/%s", n["kind"], n["name"]))
	for _, c := range n["children"].([]any) {
		out = treeNodes(c.(map[string]any), out)
	}
	return out
}

// gangSections lists a gang answer's groups and subgroups as
// "name: pod pod…", depth first.
func gangSections(groups []any, out []string) []string {
	for _, g := range groups {
		g := g.(map[string]any)
		var pods []string
		for _, p := range asSlice(g["pods"]) {
			pods = append(pods, p.(string))
		}
		out = append(out, g["name"].(string)+": "+strings.Join(pods, " "))
		out = gangSections(asSlice(g["subGroups"]), out)
	}
	return out
}

// cliValues runs karta with args and decodes each JSON value it prints
// (karta revise -o patch prints a list per document).
func cliValues(t *testing.T, args ...string) []any {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, streams{in: strings.NewReader(""), out: &out, err: &errOut})
	require.Equal(t, exitOK, code, "karta %s: %s", strings.Join(args, " "), errOut.String())
	var values []any
	dec := json.NewDecoder(&out)
	for dec.More() {
		var v any
		require.NoError(t, dec.Decode(&v))
		values = append(values, v)
	}
	return values
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func TestStudioBrowser(t *testing.T) {
	chrome := chromiumPath(t)
	srv := httptest.NewServer(studio.New(studio.Options{}))
	defer srv.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.WindowSize(1280, 800), chromedp.Flag("disable-gpu", true))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	b := &browser{t: t, ctx: ctx, dir: artifactsDir(t)}
	require.NoError(t, chromedp.Do(ctx)) // starts the browser

	// Pick a built-in: its Karta, script, first state and pods load, and
	// the status comes.
	b.do(chromedp.EmulateViewport(1280, 800), chromedp.Navigate(srv.URL))
	b.waitFor("the built-ins", `document.querySelector('#builtin option[value="pytorchjob"]') !== null`)
	b.do(chromedp.SetValue(chromedp.ID("builtin"), "pytorchjob"))
	evalJS[bool](b, `document.getElementById("builtin").dispatchEvent(new Event("change")); true`)
	b.waitFor("the Running status", `[...document.querySelectorAll("#pane-status .status-badge")].map(e => e.textContent).join() === "Running"`)
	assert.Equal(t, "running", evalJS[string](b, `document.getElementById("state").selectedOptions[0].textContent`))
	b.screenshot("status.png")

	// Type a broken jq path: the problem is at its line, in the list and in
	// the gutter, and the answers wait for the fix.
	text := evalJS[string](b, `document.getElementById("karta").value`)
	const path = ".spec.runPolicy.schedulingPolicy.minAvailable"
	at := strings.Index(text, path)
	require.GreaterOrEqual(t, at, 0, "the PyTorchJob Karta reads %s", path)
	line := strings.Count(text[:at], "\n") + 1
	end := at + len(path)
	evalJS[bool](b, fmt.Sprintf(`(() => { const ta = document.getElementById("karta"); ta.focus(); ta.setSelectionRange(%d, %d); return true })()`, end, end))
	b.do(chromedp.KeyEvent("["))
	b.waitFor("the problem at its line", fmt.Sprintf(`document.querySelector('#karta-problems li.error[data-line="%d"]') !== null`, line))
	problem := evalJS[string](b, `document.querySelector("#karta-problems li.error").textContent`)
	assert.Contains(t, problem, fmt.Sprintf("line %d:", line))
	assert.Contains(t, problem, "minMemberPath: invalid jq")
	assert.True(t, evalJS[bool](b, fmt.Sprintf(`document.querySelector('#karta-gutter div[data-line="%d"]').classList.contains("err")`, line)))
	assert.Contains(t, evalJS[string](b, `document.getElementById("pane-status").textContent`), "Fix the Karta's problems")
	b.screenshot("problem.png")

	// The problem is a button: Enter on it selects its line in the editor.
	b.do(chromedp.Focus(chromedp.CSS("#karta-problems li.error button")), chromedp.KeyEvent(kb.Enter))
	assert.Equal(t, "karta", evalJS[string](b, `document.activeElement.id`))
	assert.Equal(t, line, evalJS[int](b, `(() => { const ta = document.getElementById("karta"); return ta.value.slice(0, ta.selectionStart).split("\n").length })()`), "the selection is on the problem's line")

	// Fix it: the problem goes, the status is back.
	evalJS[bool](b, fmt.Sprintf(`(() => { const ta = document.getElementById("karta"); ta.setSelectionRange(%d, %d); return true })()`, end+1, end+1))
	b.do(chromedp.KeyEvent(kb.Backspace))
	b.waitFor("the status again", `document.querySelectorAll("#karta-problems li").length === 0 && document.querySelector("#pane-status .status-badge")?.textContent === "Running"`)
	assert.Equal(t, text, evalJS[string](b, `document.getElementById("karta").value`))

	// Paste a multi-document object (a paste is an insertText over the
	// selection): one answer per document.
	running, err := os.ReadFile("../../examples/pytorchjob/running.yaml")
	require.NoError(t, err)
	failed, err := os.ReadFile("../../examples/pytorchjob/failed.yaml")
	require.NoError(t, err)
	objects := string(running) + "---\n" + string(failed)
	pasted, err := json.Marshal(objects)
	require.NoError(t, err)
	evalJS[bool](b, fmt.Sprintf(`(() => { const ta = document.getElementById("objects"); ta.focus(); ta.select(); return document.execCommand("insertText", false, %s) })()`, pasted))
	b.waitFor("both documents' status", `[...document.querySelectorAll("#pane-status .status-badge")].map(e => e.textContent).join() === "Running,Failed"`)

	// The same inputs through the CLI.
	dir := t.TempDir()
	kartaFile, objectsFile, podsFile := filepath.Join(dir, "karta.yaml"), filepath.Join(dir, "objects.yaml"), filepath.Join(dir, "pods.yaml")
	pods := evalJS[string](b, `document.getElementById("pods").value`)
	require.NotEmpty(t, pods)
	for file, data := range map[string]string{kartaFile: text, objectsFile: objects, podsFile: pods} {
		require.NoError(t, os.WriteFile(file, []byte(data), 0o644))
	}
	script := evalJS[string](b, `document.getElementById("script").value`)
	args := []string{"-k", kartaFile, "-f", objectsFile, "--pods", podsFile, "-o", "json"}
	if script != "" {
		scriptFile := filepath.Join(dir, "override.lua")
		require.NoError(t, os.WriteFile(scriptFile, []byte(script), 0o644))
		args = append(args, "--script", scriptFile)
	}

	// The tree pane, reached with the keyboard (arrow keys between tabs),
	// draws describe's tree of each document.
	b.do(chromedp.Focus(chromedp.ID("tab-status")), chromedp.KeyEvent(kb.ArrowRight))
	b.waitFor("the tree tab", `document.activeElement.id === "tab-tree" && !document.getElementById("pane-tree").hidden`)
	described := cli(t, append([]string{"describe"}, args...)...)
	require.Len(t, described, 2)
	drawn := evalJS[[][]string](b, `[...document.querySelectorAll("#pane-tree article")].map(a => [...a.querySelectorAll(".node")].map(n => n.dataset.kind + "/" + n.dataset.name))`)
	require.Len(t, drawn, 2)
	for i, d := range described {
		assert.Equal(t, treeNodes(d, nil), drawn[i], "document %d's tree", i+1)
	}
	assert.Contains(t, drawn[0], "Pod/mistral-7b-sft-worker-2")
	b.screenshot("tree.png")

	// The gang pane shows karta gang's groups, with their pods.
	b.do(chromedp.Click(chromedp.ID("tab-gangs")))
	b.waitFor("the gangs tab", `!document.getElementById("pane-gangs").hidden`)
	ganged := cli(t, append([]string{"gang"}, args...)...)
	require.Len(t, ganged, 2)
	shown := evalJS[[][]string](b, `[...document.querySelectorAll("#pane-gangs article")].map(a => [...a.querySelectorAll("section.gang")].map(g => g.dataset.group + ": " + [...g.querySelectorAll(":scope > .chip")].map(c => c.dataset.pod).join(" ")))`)
	require.Len(t, shown, 2)
	for i, g := range ganged {
		assert.Equal(t, gangSections(asSlice(g["groups"]), nil), shown[i], "document %d's gangs", i+1)
	}
	b.screenshot("gangs.png")

	// Each scheduler's objects, and the compiled Lua.
	b.do(chromedp.Click(chromedp.ID("tab-schedulers")))
	b.waitFor("the schedulers", `document.querySelectorAll('#pane-schedulers [data-target]').length === 8`)
	b.screenshot("schedulers.png")
	assert.NotContains(t, evalJS[string](b, `document.querySelector(".panes").innerText`), "[object ", "every value is drawn, none as a JavaScript object's name")
	b.do(chromedp.Click(chromedp.ID("tab-lua")))
	assert.Contains(t, evalJS[string](b, `document.getElementById("lua").textContent`), "function InterpretStatus")

	// The revise pane shows karta revise's patch of each document (the
	// built-in's example revisions), and its diff.
	revisions := evalJS[string](b, `document.getElementById("revisions").value`)
	require.NotEmpty(t, revisions, "the picker loads the example's revisions")
	revisionsFile := filepath.Join(dir, "revisions.yaml")
	require.NoError(t, os.WriteFile(revisionsFile, []byte(revisions), 0o644))
	b.do(chromedp.Click(chromedp.ID("tab-revise")))
	b.waitFor("the diffs", `document.querySelectorAll("#pane-revise pre.diff").length === 2`)
	reviseArgs := []string{"revise", "-k", kartaFile, "-f", objectsFile, "-r", revisionsFile, "-o", "patch"}
	if script != "" {
		reviseArgs = append(reviseArgs, "--script", filepath.Join(dir, "override.lua"))
	}
	patches := cliValues(t, reviseArgs...)
	require.Len(t, patches, 2)
	shownPatches := evalJS[[]string](b, `[...document.querySelectorAll("#pane-revise article")].map(a => a.querySelector("details pre").textContent)`)
	require.Len(t, shownPatches, 2)
	for i, p := range patches {
		var shown any
		require.NoError(t, json.Unmarshal([]byte(shownPatches[i]), &shown))
		assert.Equal(t, p, shown, "document %d's patch is karta revise -o patch's", i+1)
	}
	added := evalJS[[]string](b, `[...document.querySelectorAll("#pane-revise article:first-of-type pre.diff .add")].map(s => s.textContent.trim())`)
	assert.Contains(t, added, "+          schedulerName: kai-scheduler")
	b.screenshot("revise.png")

	// The exports pane: the Karmada and Argo CD exports, and their answers
	// on each document beside the in-process ones. The exported
	// components are what karmada run -c answers with the exported
	// customization.
	b.do(chromedp.Click(chromedp.ID("tab-exports")))
	b.waitFor("the exports' answers", `document.querySelectorAll("#pane-exports article section.cmp").length > 2`, "#pane-exports")
	assert.Zero(t, evalJS[int](b, `document.querySelectorAll("#pane-exports section.cmp.disagree").length`), "the exports answer as karta does")
	customization := filepath.Join(dir, "customization.yaml")
	require.NoError(t, os.WriteFile(customization, []byte(evalJS[string](b, `document.querySelector('#pane-exports [data-export="karmada"] pre').textContent`)), 0o644))
	components := cliValues(t, "karmada", "run", "--operation", "InterpretComponent", "-c", customization, "-f", objectsFile, "-o", "json")
	shownComponents := evalJS[[]string](b, `[...document.querySelectorAll('#pane-exports [data-operation="Karmada InterpretComponent"] pre.exported')].map(c => c.textContent)`)
	require.Len(t, shownComponents, 2)
	for i, c := range components {
		var shown any
		require.NoError(t, json.Unmarshal([]byte(shownComponents[i]), &shown))
		assert.Equal(t, c.(map[string]any)["components"], shown, "document %d's exported components", i+1)
	}
	assert.Equal(t, []string{"Progressing", "Degraded"}, evalJS[[]string](b, `[...document.querySelectorAll('#pane-exports [data-operation="Argo CD health"] pre.exported')].map(c => JSON.parse(c.textContent).status)`))
	b.screenshot("exports.png")

	// An override of InterpretStatus: the exports refuse it, and the pane
	// says why, with karta's answers alone.
	override := "function InterpretStatus(obj)\n  return {status = \"Running\"}\nend\n"
	quoted, err := json.Marshal(override)
	require.NoError(t, err)
	evalJS[bool](b, fmt.Sprintf(`(() => { const ta = document.getElementById("script"); ta.focus(); ta.select(); return document.execCommand("insertText", false, %s) })()`, quoted))
	b.waitFor("the Argo CD export's refusal", `document.querySelector('#pane-exports [data-export="argo"] .error-box')?.textContent.includes("InterpretStatus")`)
	assert.Positive(t, evalJS[int](b, `document.querySelectorAll('#pane-exports section.cmp.refused[data-operation="Argo CD health"]').length`), "the health is karta's alone")
	b.screenshot("exports-refused.png")
	evalJS[bool](b, fmt.Sprintf(`(() => { const ta = document.getElementById("script"); ta.focus(); ta.select(); return document.execCommand("insertText", false, %q) || ta.value === "" })()`, script))

	// A CRD pasted: a path of the Karta its schema refutes is a problem at
	// the path's line, as karta validate --crd reports it.
	crd, err := os.ReadFile("../../examples/tutorial-trainjob/crd.yaml")
	require.NoError(t, err)
	trainjob, err := os.ReadFile("../../examples/kartas/trainjob.yaml")
	require.NoError(t, err)
	typo := strings.Replace(string(trainjob), "path: .spec.suspend,", "path: .spec.suspnd,", 1)
	require.NotEqual(t, string(trainjob), typo)
	typoFile := filepath.Join(dir, "trainjob.yaml")
	require.NoError(t, os.WriteFile(typoFile, []byte(typo), 0o644))
	var validateOut, validateErr bytes.Buffer
	run([]string{"validate", "--crd", "../../examples/tutorial-trainjob/crd.yaml", typoFile}, streams{in: strings.NewReader(""), out: &validateOut, err: &validateErr})
	firstCLI := strings.SplitN(validateErr.String(), "\n", 2)[0]
	require.Contains(t, firstCLI, typoFile+":")
	cliLine := strings.SplitN(strings.TrimPrefix(firstCLI, typoFile+":"), ":", 2)[0]
	tutorial, err := os.ReadFile("../../examples/tutorial-trainjob/running.yaml")
	require.NoError(t, err)
	for id, text := range map[string]string{"karta": typo, "objects": string(tutorial), "crd": string(crd)} {
		quoted, err := json.Marshal(text)
		require.NoError(t, err)
		evalJS[bool](b, fmt.Sprintf(`(() => { const ta = document.getElementById(%q); ta.focus(); ta.select(); return document.execCommand("insertText", false, %s) })()`, id, quoted))
	}
	b.do(chromedp.Click(chromedp.ID("tab-status")))
	b.waitFor("the schema's problem at its line", fmt.Sprintf(`document.querySelector('#karta-problems li.error[data-line="%s"]')?.textContent.includes("schema:")`, cliLine))
	crdProblem := evalJS[string](b, `document.querySelector("#karta-problems li.error").textContent`)
	assert.Contains(t, crdProblem, `did you mean "suspend"`)
	assert.Contains(t, crdProblem, "line "+cliLine+":")
	assert.True(t, evalJS[bool](b, fmt.Sprintf(`document.querySelector('#karta-gutter div[data-line="%s"]').classList.contains("err")`, cliLine)))
	b.waitFor("the hooks still answer", `document.querySelector("#pane-status .status-badge") !== null`)
	b.do(chromedp.Click(chromedp.CSS("#karta-problems li.error button"))) // selects its line
	b.screenshot("crd.png")

	// A narrow window: one column, every part reachable.
	b.do(chromedp.Click(chromedp.ID("tab-status")), chromedp.EmulateViewport(420, 900))
	assert.Equal(t, 1, evalJS[int](b, `getComputedStyle(document.querySelector("main")).gridTemplateColumns.split(" ").length`))
	assert.LessOrEqual(t, evalJS[int](b, `document.documentElement.scrollWidth`), 420, "nothing wider than the window")
	b.screenshot("narrow.png")
	b.do(chromedp.Click(chromedp.ID("tab-exports")))
	b.waitFor("the exports at the narrow width", `document.querySelectorAll("#pane-exports article").length === 1`)
	assert.LessOrEqual(t, evalJS[int](b, `document.documentElement.scrollWidth`), 420, "the exports' answers fit the window")
	b.do(chromedp.Click(chromedp.ID("tab-status")))
	b.do(chromedp.Click(chromedp.CSS("a.skip")))
	b.waitFor("the answers in view", `(() => { const r = document.getElementById("tabs").getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight })()`)
	b.screenshot("narrow-answers.png")
}
