package main

import (
	"fmt"
	"sort"

	"github.com/kartalua/karta/karmada"
	"github.com/spf13/cobra"
)

// newKarmadaExportCmd is karta karmada export (docs/cli.md, "karta karmada
// export"): a Karta as a ResourceInterpreterCustomization for Karmada's
// own runtime.
func newKarmadaExportCmd(s streams) *cobra.Command {
	var f objectFlags
	cmd := &cobra.Command{
		Use:   "export [-k REF] [--script FILE]",
		Short: "Print a Karta as a Karmada ResourceInterpreterCustomization",
		Long: "Print a ResourceInterpreterCustomization (config.karmada.io/v1alpha1) whose self-contained Lua\n" +
			"scripts reproduce the Karta's Karmada hooks in Karmada's own runtime: replicaResource,\n" +
			"componentResource, replicaRevision, statusReflection, healthInterpretation, statusAggregation\n" +
			"and dependencyInterpretation, as the Karta defines them (docs/karta.md). The scripts use only\n" +
			"Karmada's sandbox and kube library, with jq run by a pure-Lua runtime that computes what gojq\n" +
			"computes. A jq expression only gojq can run (docs/jq.md; karta validate --target karmada lists\n" +
			"them) or an override that needs karta fails the export, naming it (exit 1).\n" +
			"Without -k, every built-in that exports is printed, one document each; the others are\n" +
			"listed on standard error.",
		Example: "  karta karmada export -k pytorchjob > pytorchjob-customization.yaml\n" +
			"  karta karmada export -k my-karta.yaml --script retain.lua",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			scripts, err := readScripts(s, f.scripts)
			if err != nil {
				return err
			}
			if f.karta == "" {
				if len(scripts) > 0 {
					return usageError("--script needs -k")
				}
				return exportBuiltins(s)
			}
			res, err := newResolver(s, f.karta, scripts, builtinRegistry)
			if err != nil {
				return err
			}
			p, err := res.only()
			if err != nil {
				return reported(s, err)
			}
			data, err := karmada.Export(p)
			if err != nil {
				return reported(s, err)
			}
			_, err = s.out.Write(data)
			return err
		},
	}
	f.addKarta(cmd, "the `REF` of the Karta: a file (YAML or JSON) or a built-in's name; default: every built-in")
	return cmd
}

// exportBuiltins prints every built-in that exports, sorted by name, and
// lists the others with why on standard error.
func exportBuiltins(s streams) error {
	reg, err := builtinRegistry()
	if err != nil {
		return reported(s, err)
	}
	progs := reg.List()
	sort.Slice(progs, func(i, j int) bool { return progs[i].Name() < progs[j].Name() })
	first := true
	for _, p := range progs {
		data, err := karmada.Export(p)
		if err != nil {
			fmt.Fprintf(s.err, "skipped: %s\n", oneLine(err.Error()))
			continue
		}
		if !first {
			fmt.Fprintln(s.out, "---")
		}
		first = false
		if _, err := s.out.Write(data); err != nil {
			return err
		}
	}
	return nil
}
