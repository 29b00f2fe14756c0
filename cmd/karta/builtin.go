package main

import (
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
)

var (
	builtinOnce sync.Once
	builtinReg  *interpreter.Registry
	builtinErr  error
)

// builtinEntry is one built-in as `karta builtin list -o json` prints it.
type builtinEntry struct {
	Name       string   `json:"name"`
	Group      string   `json:"group"`
	Version    string   `json:"version"`
	Kind       string   `json:"kind"`
	Components []string `json:"components"`
	// Script says the built-in has a bundled Lua script (scripts/NAME.lua).
	Script bool `json:"script"`
}

// builtinRegistry compiles the built-in Kartas once per process and
// registers them by GVK and name. Commands reach it only when -k is left
// out or names a built-in, so a run with -k FILE pays nothing for it.
func builtinRegistry() (*interpreter.Registry, error) {
	builtinOnce.Do(func() {
		builtinReg, builtinErr = builtin.Registry(interpreter.Options{PoolSize: 1})
	})
	return builtinReg, builtinErr
}

func newBuiltinCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "builtin",
		Short: "Work with the built-in Kartas",
		Long:  "The Kartas karta ships for well-known workload kinds, found by the object's kind or by name with -k NAME.",
		Args:  cobra.NoArgs,
	}
	var output string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the built-in Kartas: name, kind and components",
		Long: "List the built-in Kartas with the group, version and kind each interprets, its components\n" +
			"(root first) and whether it has a bundled script. -o table (the default on a terminal)\n" +
			"prints one row each (SCRIPT: yes when it has one); -o json (the default in a pipe) or yaml a list of\n" +
			"{name, group, version, kind, components, script}.",
		Example: "  karta builtin list\n" +
			"  karta builtin list -o json",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			format, err := outputFormat(output, []string{formatJSON, formatYAML, formatTable}, defaultFormat(s.out))
			if err != nil {
				return err
			}
			all, err := builtin.All()
			if err != nil {
				return &exitError{code: exitInvalid, msg: err.Error()}
			}
			entries := make([]builtinEntry, len(all))
			rows := [][]string{{"NAME", "GROUP/VERSION", "KIND", "SCRIPT", "COMPONENTS"}}
			for i, b := range all {
				gvk := b.Karta.Spec.StructureDefinition.RootComponent.Kind.GVK()
				e := builtinEntry{Name: b.Name, Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Components: []string{}, Script: b.Script != ""}
				for _, c := range b.Karta.Spec.StructureDefinition.Components() {
					e.Components = append(e.Components, c.Name)
				}
				entries[i] = e
				script := "-"
				if e.Script {
					script = "yes"
				}
				rows = append(rows, []string{b.Name, gvk.GroupVersion().String(), gvk.Kind, script, strings.Join(e.Components, ", ")})
			}
			return writeResults(s.out, format, []result{{value: entries, table: func(w io.Writer) error { return table(w, rows) }}})
		},
	}
	list.Flags().StringVarP(&output, "output", "o", "", "json, yaml or table (default: table on a terminal, else json)")
	cmd.AddCommand(list)
	return cmd
}
