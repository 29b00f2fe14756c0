package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kartalua/karta/argo"
	"github.com/kartalua/karta/internal/jsonpatch"
	"github.com/kartalua/karta/object"
)

// actionsFolder is the actions/ folder of an Argo CD resource
// customization directory for obj: <dir>/<group>/<Kind>/actions (Argo CD
// looks actions up by the exact kind), else <dir>/actions when dir is a
// customization folder itself.
func actionsFolder(dir string, obj map[string]any) (string, error) {
	u := asUnstructured(obj)
	gvk := u.GroupVersionKind()
	key := gvk.Kind
	if gvk.Group != "" {
		key = gvk.Group + "/" + gvk.Kind
	}
	if gvk.Kind != "" {
		p := filepath.Join(dir, filepath.FromSlash(key), "actions")
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p, nil
		}
	}
	p := filepath.Join(dir, "actions")
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return p, nil
	}
	return "", fmt.Errorf("%s has no actions for %s: neither %s/actions nor actions exists", dir, key, key)
}

// compileScript reads and compiles an Argo CD script, naming it by its
// path under dir.
func compileScript(dir, file string) (*argo.Script, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	name, err := filepath.Rel(dir, file)
	if err != nil {
		name = file
	}
	return argo.Compile(filepath.ToSlash(name), string(src))
}

func newArgoActionsCmd(s streams) *cobra.Command {
	var filename, dir, output string
	cmd := &cobra.Command{
		Use:   "actions -f OBJECT --dir DIR",
		Short: "List the Argo CD resource actions a discovery.lua offers for an object",
		Long: "Run the discovery.lua of the object's kind in an Argo CD resource customization directory\n" +
			"(DIR/<group>/<Kind>/actions/discovery.lua, or DIR/actions/discovery.lua when DIR is the\n" +
			"kind's folder) with each document of -f as the global obj, and print the actions it offers,\n" +
			"as Argo CD reads them: name, disabled, displayName, iconClass and params, sorted by name.",
		Example: "  karta argo actions -f examples/jobset/running.yaml --dir scripts/argocd\n" +
			"  kubectl get cronjob nightly -o yaml | karta argo actions -f - --dir cmd/karta/testdata/argo/customizations -o table",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := outputFormat(output, []string{formatJSON, formatYAML, formatTable}, defaultFormat(s.out))
			if err != nil {
				return err
			}
			objs, err := readObjects(s, filename)
			if err != nil {
				return err
			}
			var results []result
			failed := false
			scripts := map[string]*argo.Script{}
			for _, doc := range objs.items {
				where := objs.label(doc)
				actions, err := discover(cmd, dir, doc, scripts)
				if err != nil {
					reportError(s, where, err)
					failed = true
					continue
				}
				results = append(results, result{value: actions, where: where, object: objectName(doc.Object), table: actionsTable(actions)})
			}
			return writeAnswered(s, format, results, failed)
		},
	}
	cmd.Flags().StringVarP(&filename, "filename", "f", "", "the object `FILE` (YAML or JSON; one result per document, and per item of a List; - reads standard input)")
	cmd.Flags().StringVar(&dir, "dir", "", "the resource customization `DIR` (Argo CD's resource_customizations layout)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output `FMT`: json, yaml or table (default: table on a terminal, json otherwise)")
	_ = cmd.MarkFlagRequired("filename")
	_ = cmd.MarkFlagRequired("dir")
	return cmd
}

func discover(cmd *cobra.Command, dir string, doc *object.Document, scripts map[string]*argo.Script) ([]argo.Action, error) {
	folder, err := actionsFolder(dir, doc.Object)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(folder, "discovery.lua")
	sc, ok := scripts[file]
	if !ok {
		if sc, err = compileScript(dir, file); err != nil {
			return nil, err
		}
		scripts[file] = sc
	}
	return sc.Discover(cmd.Context(), doc.Object)
}

// actionsTable prints actions as NAME DISABLED DISPLAY-NAME ICON PARAMS.
func actionsTable(actions []argo.Action) func(w io.Writer) error {
	return func(w io.Writer) error {
		rows := [][]string{{"NAME", "DISABLED", "DISPLAY NAME", "ICON", "PARAMS"}}
		for _, a := range actions {
			var params []string
			for _, p := range a.Params {
				params = append(params, p.Name)
			}
			rows = append(rows, []string{a.Name, fmt.Sprint(a.Disabled), cell(a.DisplayName), cell(a.IconClass), cell(strings.Join(params, ","))})
		}
		return table(w, rows)
	}
}

func newArgoActionCmd(s streams) *cobra.Command {
	var filename, dir, output string
	var params []string
	cmd := &cobra.Command{
		Use:   "action NAME -f OBJECT --dir DIR [--param KEY=VALUE]...",
		Short: "Run an Argo CD resource action on an object",
		Long: "Run the action NAME of the object's kind in an Argo CD resource customization directory\n" +
			"(DIR/<group>/<Kind>/actions/NAME/action.lua, or DIR/actions/NAME/action.lua when DIR is the\n" +
			"kind's folder) with the object as the global obj and the --param values as actionParams,\n" +
			"and print what Argo CD would apply, read as Argo CD reads it (empty tables where the object\n" +
			"had objects are restored): the patched object for an action that returns the object\n" +
			"(\"old style\"), or the list of {operation, resource} for one that returns resources to\n" +
			"create or patch. -o patch prints the JSON Patch (RFC 6902) from the object to the patched\n" +
			"one. -f takes one document.",
		Example: "  karta argo action suspend -f examples/jobset/running.yaml --dir scripts/argocd -o patch\n" +
			"  karta argo action scale -f cmd/karta/testdata/argo/customizations/apps/Deployment/actions/testdata/deployment.yaml \\\n" +
			"    --dir cmd/karta/testdata/argo/customizations --param replicas=5 -o patch",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := outputFormat(output, []string{formatYAML, formatJSON, formatPatch}, objectFormat(s.out))
			if err != nil {
				return err
			}
			values := map[string]string{}
			for _, p := range params {
				k, v, ok := strings.Cut(p, "=")
				if !ok || k == "" {
					return usageError("--param %s: want KEY=VALUE", p)
				}
				values[k] = v
			}
			objs, err := readObjects(s, filename)
			if err != nil {
				return err
			}
			if len(objs.items) != 1 {
				return usageError("-f %s: want one object, found %d objects", objs.source, len(objs.items))
			}
			obj := objs.items[0].Object
			folder, err := actionsFolder(dir, obj)
			if err != nil {
				return reported(s, err)
			}
			name := args[0]
			if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
				return usageError("%q is not an action name", name)
			}
			sc, err := compileScript(dir, filepath.Join(folder, name, "action.lua"))
			if err != nil {
				return reported(s, err)
			}
			res, err := sc.RunAction(cmd.Context(), obj, values)
			if err != nil {
				return reported(s, err)
			}
			var value any
			switch {
			case format == formatPatch:
				if !res.OldStyle {
					return reported(s, fmt.Errorf("%s: -o patch: the action returns a list of resources, not the patched object; use -o yaml", sc.Name()))
				}
				if value, err = actionPatch(obj, res.Resources[0].Object); err != nil {
					return reported(s, err)
				}
				format = formatJSON
			case res.OldStyle:
				value = res.Resources[0].Object
			default:
				list := []any{}
				for _, r := range res.Resources {
					list = append(list, map[string]any{"operation": r.Operation, "resource": r.Object})
				}
				value = list
			}
			return writeResults(s.out, format, []result{{value: value, where: objs.label(objs.items[0]), object: objectName(obj)}})
		},
	}
	cmd.Flags().StringVarP(&filename, "filename", "f", "", "the object `FILE` (YAML or JSON, one document; - reads standard input)")
	cmd.Flags().StringVar(&dir, "dir", "", "the resource customization `DIR` (Argo CD's resource_customizations layout)")
	cmd.Flags().StringArrayVar(&params, "param", nil, "an action parameter `KEY=VALUE` (repeatable); the script reads actionParams[KEY]")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output `FMT`: yaml, json, or patch (the JSON Patch of an old-style action) (default: yaml on a terminal, else json)")
	_ = cmd.MarkFlagRequired("filename")
	_ = cmd.MarkFlagRequired("dir")
	return cmd
}

// actionPatch is the JSON Patch from the object to the patched one.
func actionPatch(from, to map[string]any) ([]jsonpatch.Operation, error) {
	a, err := json.Marshal(from)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(to)
	if err != nil {
		return nil, err
	}
	ops, err := jsonpatch.Create(a, b)
	if ops == nil {
		ops = []jsonpatch.Operation{}
	}
	return ops, err
}
