package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	slashpath "path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/argo"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
)

const formatArgoCM = "argocd-cm"

func newArgoExportCmd(s streams) *cobra.Command {
	var f objectFlags
	var dir, examples, output string
	cmd := &cobra.Command{
		Use:   "export [-k REF] [--dir OUT] [--examples DIR] [-o argocd-cm]",
		Short: "Write a Karta as an Argo CD resource customization",
		Long: "Write the Argo CD resource customization of a Karta under OUT (default .):\n" +
			"<group>/<Kind>/health.lua, self-contained (Lua's base, string, table and math libraries\n" +
			"only, with jq run by a pure-Lua runtime), health_test.yaml and testdata/ made from the\n" +
			"Karta's examples (every YAML file of --examples, default examples/<name>, whose object is\n" +
			"of the Karta's kind), and with a suspendDefinition actions/discovery.lua,\n" +
			"actions/suspend/action.lua, actions/resume/action.lua and actions/action_test.yaml. The\n" +
			"folder is ready for Argo CD's resource_customizations, and karta argo test runs it.\n" +
			"karta's statuses map to Argo CD's words: Completed Healthy, Running Healthy (Progressing\n" +
			"for a batch kind, one that maps Completed), Initializing, Suspending and Resuming\n" +
			"Progressing, Failed and Degraded Degraded, Suspended Suspended, Undefined no assessment;\n" +
			"the message is the last condition's with status True. -o argocd-cm prints the argocd-cm\n" +
			"entries instead (health, useOpenLibs, actions). Without -k every built-in is written.\n" +
			"An --examples DIR that does not exist is an error; a Karta with no example of its kind is\n" +
			"written without tests, with a warning. With --script, the overrides are carried or the\n" +
			"export is refused naming the hook (InterpretStatus, Suspend and Resume cannot be).",
		Example: "  karta argo export -k jobset --dir resource_customizations\n" +
			"  karta argo export -k examples/kartas/trainjob.yaml --examples examples/trainjob -o argocd-cm",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "" && output != formatArgoCM {
				return usageError("-o %s: unknown output format (want %s)", output, formatArgoCM)
			}
			if f.karta == "" && len(f.scripts) > 0 {
				return usageError("--script overrides one Karta's hooks: name it with -k")
			}
			var progs []*interpreter.Program
			if f.karta == "" {
				reg, err := builtinRegistry()
				if err != nil {
					return reported(s, err)
				}
				progs = reg.List()
				sort.Slice(progs, func(i, j int) bool { return progs[i].Name() < progs[j].Name() })
			} else {
				// With the --script overrides: the export carries them or
				// refuses, naming the hook, and its tests expect what the
				// overridden Program computes.
				scripts, err := readScripts(s, f.scripts)
				if err != nil {
					return err
				}
				res, err := newResolver(s, f.karta, scripts, builtinRegistry)
				if err != nil {
					return err
				}
				p, err := res.only()
				if err != nil {
					return reported(s, err)
				}
				progs = []*interpreter.Program{p}
			}
			var cms []map[string]string
			// Argo CD keys customizations by group and kind, not version:
			// of several Kartas for one kind, the first (by name) is written.
			written := map[string]string{}
			for _, p := range progs {
				gk := p.GVK().GroupKind().String()
				if first, ok := written[gk]; ok {
					fmt.Fprintf(s.err, "skipped: karta %q: %s is written already by karta %q (Argo CD keys customizations by group and kind)\n", p.Name(), gk, first)
					continue
				}
				written[gk] = p.Name()
				exDir := examples
				if exDir == "" {
					exDir = filepath.Join("examples", p.Name())
				} else if f.karta == "" {
					exDir = filepath.Join(examples, p.Name())
				}
				files, tested, err := argoFolder(cmd.Context(), p, exDir)
				if err != nil {
					if errors.Is(err, fs.ErrNotExist) && examples != "" && f.karta != "" {
						// The folder the user named is not there: no
						// silent export without tests.
						return cannotRead(s, exDir, err)
					}
					if !errors.Is(err, fs.ErrNotExist) {
						return reported(s, err)
					}
				}
				if !tested {
					fmt.Fprintf(s.err, "warning: karta %q: no example of %s in %s: the export has no tests (pass --examples DIR)\n", p.Name(), describeKind(p.GVK()), exDir)
				}
				if output == formatArgoCM {
					cm, err := argoCMData(p, files)
					if err != nil {
						return reported(s, err)
					}
					cms = append(cms, cm)
					continue
				}
				if err := writeFolder(s, dir, files); err != nil {
					return err
				}
			}
			if output == formatArgoCM {
				return writeArgoCM(s, cms)
			}
			return nil
		},
	}
	f.addKarta(cmd, "the `REF` of the Karta: a file (YAML or JSON) or a built-in's name; default: every built-in")
	cmd.Flags().StringVar(&dir, "dir", ".", "the `OUT` directory the <group>/<Kind> folders go under")
	cmd.Flags().StringVar(&examples, "examples", "", "the `DIR` of the Karta's example objects (default examples/<name>; without -k, the directory holding one folder per built-in)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "print `FMT` instead of writing files: argocd-cm (the ConfigMap's data entries)")
	return cmd
}

// argoFolder is the files of a Karta's Argo CD customization, by slash
// path under OUT: the exported scripts, and tests from the examples,
// whose expected results are the Program's own, in process.
//
// tested is false when the examples folder holds no object of the Karta's
// kind (the folder alone is written, without tests); a folder that does
// not exist is that too, with its *fs.PathError.
func argoFolder(ctx context.Context, p *interpreter.Program, examples string) (files map[string][]byte, tested bool, err error) {
	files, err = argoFiles(ctx, p, examples)
	if err != nil {
		return files, false, err
	}
	for name := range files {
		if strings.HasSuffix(name, "/health_test.yaml") {
			return files, true, nil
		}
	}
	return files, false, nil
}

func argoFiles(ctx context.Context, p *interpreter.Program, examples string) (map[string][]byte, error) {
	ex, err := argo.ExportProgram(p)
	if err != nil {
		return nil, err
	}
	folder := ex.Kind
	if ex.Group != "" {
		folder = ex.Group + "/" + ex.Kind
	}
	files := map[string][]byte{}
	for name, src := range ex.Scripts {
		files[slashpath.Join(folder, name)] = []byte(src)
	}
	objs, err := exampleObjects(p, examples)
	if err != nil {
		return files, err
	}
	if len(objs) == 0 {
		return files, nil
	}
	words := argo.HealthWords(argo.IsBatch(p.Karta()))
	var health bytes.Buffer
	fmt.Fprintf(&health, "# Generated by karta from the examples of Karta %q: the statuses karta computes in process.\ntests:\n", p.Name())
	_, suspendable := ex.Scripts["actions/suspend/action.lua"]
	var actions bytes.Buffer
	if suspendable {
		fmt.Fprintf(&actions, "# Generated by karta from the examples of Karta %q: suspend and resume as karta applies them in process.\n", p.Name())
	}
	var discovery, actionTests bytes.Buffer
	for _, o := range objs {
		files[slashpath.Join(folder, "testdata", o.name)] = o.data
		u := &unstructured.Unstructured{Object: o.obj}
		st, err := p.InterpretStatus(ctx, u)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.name, err)
		}
		fmt.Fprintf(&health, "  - inputPath: testdata/%s\n", o.name)
		if w, ok := words[st.Status]; ok {
			fmt.Fprintf(&health, "    healthStatus:\n      status: %s\n      message: %s\n", w, yamlString(argo.HealthMessage(st.Conditions)))
		} else {
			health.WriteString("    healthStatus: {}\n")
		}
		if !suspendable {
			continue
		}
		base := strings.TrimSuffix(o.name, slashpath.Ext(o.name))
		for _, a := range []struct {
			name, done string
			run        func(context.Context, *unstructured.Unstructured) (*interpreter.Revised, error)
		}{{"suspend", "suspended", p.Suspend}, {"resume", "resumed", p.Resume}} {
			rev, err := a.run(ctx, u)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", o.name, a.name, err)
			}
			out, err := yaml.Marshal(rev.Object.Object)
			if err != nil {
				return nil, err
			}
			want := fmt.Sprintf("testdata/%s-%s.yaml", base, a.done)
			files[slashpath.Join(folder, "actions", want)] = out
			fmt.Fprintf(&actionTests, "  - action: %s\n    inputPath: ../testdata/%s\n    expectedOutputPath: %s\n", a.name, o.name, want)
		}
		acts, err := exportedActions(ctx, p, u)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.name, err)
		}
		fmt.Fprintf(&discovery, "  - inputPath: ../testdata/%s\n    result:\n%s", o.name, acts)
	}
	files[slashpath.Join(folder, "health_test.yaml")] = health.Bytes()
	if suspendable {
		actions.WriteString("discoveryTests:\n")
		actions.Write(discovery.Bytes())
		actions.WriteString("actionTests:\n")
		actions.Write(actionTests.Bytes())
		files[slashpath.Join(folder, "actions", "action_test.yaml")] = actions.Bytes()
	}
	return files, nil
}

// exportedActions is the discovery result expected of the exported
// discovery.lua, as YAML list items: the object is suspended when
// suspending it as karta does in process changes nothing; then only resume
// is enabled, else only suspend.
func exportedActions(ctx context.Context, p *interpreter.Program, u *unstructured.Unstructured) (string, error) {
	rev, err := p.Suspend(ctx, u)
	if err != nil {
		return "", err
	}
	suspended := len(rev.Patch) == 0
	disabled := func(d bool) string {
		if d {
			return "        disabled: true\n"
		}
		return ""
	}
	return "      - name: resume\n" + disabled(!suspended) + "        iconClass: fa fa-fw fa-play-circle\n        displayName: Resume\n" +
		"      - name: suspend\n" + disabled(suspended) + "        iconClass: fa fa-fw fa-pause-circle\n        displayName: Suspend\n", nil
}

// exampleObject is one example of a Karta.
type exampleObject struct {
	name string
	data []byte
	obj  map[string]any
}

// exampleObjects reads the YAML files of dir that hold one object of the
// Karta's kind, sorted by name. A missing dir has none.
func exampleObjects(p *interpreter.Program, dir string) ([]exampleObject, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	gvk := p.GVK()
	var out []exampleObject
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		docs, err := object.Decode(data, e.Name())
		if err != nil || len(docs) != 1 {
			continue
		}
		if asUnstructured(docs[0].Object).GroupVersionKind() != gvk {
			continue
		}
		out = append(out, exampleObject{name: e.Name(), data: data, obj: docs[0].Object})
	}
	return out, nil
}

// yamlString quotes s for a YAML scalar on one line: a JSON string is a
// YAML double-quoted one.
func yamlString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSpace(b.String())
}

// writeFolder writes files under dir and lists them.
func writeFolder(s streams, dir string, files map[string][]byte) error {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return reported(s, err)
		}
		if err := os.WriteFile(p, files[name], 0o644); err != nil {
			return reported(s, err)
		}
		fmt.Fprintln(s.out, filepath.ToSlash(p))
	}
	return nil
}

// argoCMData is the argocd-cm entries of a Karta's customization.
func argoCMData(p *interpreter.Program, files map[string][]byte) (map[string]string, error) {
	gvk := p.GVK()
	key := gvk.Kind
	folder := gvk.Kind
	if gvk.Group != "" {
		key = gvk.Group + "_" + gvk.Kind
		folder = gvk.Group + "/" + gvk.Kind
	}
	data := map[string]string{
		"resource.customizations.health." + key:      string(files[folder+"/health.lua"]),
		"resource.customizations.useOpenLibs." + key: "true",
	}
	if d, ok := files[folder+"/actions/discovery.lua"]; ok {
		type def struct {
			Name      string `json:"name"`
			ActionLua string `json:"action.lua"`
		}
		actions := struct {
			Discovery   string `json:"discovery.lua"`
			Definitions []def  `json:"definitions"`
		}{Discovery: string(d)}
		for _, name := range []string{"resume", "suspend"} {
			actions.Definitions = append(actions.Definitions, def{name, string(files[folder+"/actions/"+name+"/action.lua"])})
		}
		b, err := yaml.Marshal(actions)
		if err != nil {
			return nil, err
		}
		data["resource.customizations.actions."+key] = string(b)
	}
	return data, nil
}

// writeArgoCM prints the argocd-cm ConfigMap holding the entries.
func writeArgoCM(s streams, cms []map[string]string) error {
	data := map[string]string{}
	for _, cm := range cms {
		for k, v := range cm {
			data[k] = v
		}
	}
	doc := map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":      "argocd-cm",
			"namespace": "argocd",
			"labels":    map[string]any{"app.kubernetes.io/name": "argocd-cm", "app.kubernetes.io/part-of": "argocd"},
		},
		"data": data,
	}
	return writeYAML(s.out, doc)
}
