package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newCompileCmd(s streams) *cobra.Command {
	var f objectFlags
	cmd := &cobra.Command{
		Use:   "compile -k REF [--script FILE]",
		Short: "Print the Lua program a Karta compiles to",
		Long: "Print the Lua program of a Karta: the generated hooks, with the jq paths they come\n" +
			"from as comments, then the overrides (spec.luaScript, then each --script in order).\n" +
			"The output is byte-identical for equal inputs, so it can be diffed and reviewed.",
		Example: "  karta compile -k examples/kartas/pytorchjob.yaml\n" +
			"  karta compile -k examples/custom-hook/karta.yaml --script examples/custom-hook/status.lua > batchrun.lua",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if f.karta == "" {
				// Without an object there is no kind to find a
				// built-in by.
				return usageError("compile needs -k: a Karta file or the name of a built-in")
			}
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
			_, err = fmt.Fprint(s.out, p.Source())
			return err
		},
	}
	f.addKarta(cmd, "the `REF` of the Karta: a file (YAML or JSON) or a built-in's name (required)")
	return cmd
}
