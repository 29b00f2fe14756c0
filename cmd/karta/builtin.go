package main

import (
	"fmt"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
)

var (
	builtinOnce sync.Once
	builtinReg  *interpreter.Registry
	builtinErr  error
)

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
	cmd.AddCommand(&cobra.Command{
		Use:     "list",
		Short:   "List the built-in Kartas: name, kind and components",
		Long:    "List the built-in Kartas with the group/version/kind each interprets and its components (root first).",
		Example: "  karta builtin list",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			all, err := builtin.All()
			if err != nil {
				return &exitError{code: exitInvalid, msg: err.Error()}
			}
			w := tabwriter.NewWriter(s.out, 0, 0, 3, ' ', 0)
			fmt.Fprintln(w, "NAME\tGROUP/VERSION\tKIND\tCOMPONENTS")
			for _, b := range all {
				root := b.Karta.Spec.StructureDefinition.RootComponent
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", b.Name, root.Kind.GVK().GroupVersion(), root.Kind.Kind, builtin.Components(b.Karta))
			}
			return w.Flush()
		},
	})
	return cmd
}
