package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kartalua/karta/karmada"
)

// newKarmadaCmd groups the commands that run Karmada's resource interpreter
// customizations (docs/cli.md, "karta karmada").
func newKarmadaCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "karmada",
		Short: "Run Karmada ResourceInterpreterCustomizations and their tests",
		Long: "Run the Lua scripts of Karmada ResourceInterpreterCustomizations (config.karmada.io/v1alpha1)\n" +
			"as Karmada runs them, in karta's sandbox with Karmada's kube library.",
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newKarmadaTestCmd(s), newKarmadaRunCmd(s), newKarmadaExportCmd(s))
	return cmd
}

func newKarmadaTestCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "test DIR",
		Short: "Run a directory of customizations and their tests in Karmada's third-party layout",
		Long: "Run every case of DIR, laid out as Karmada's bundled third-party customizations are:\n" +
			"<group>/<version>/<Kind>/customizations.yaml beside testdata/*-test.yaml (each document a case\n" +
			"with name, operation, desiredObj and/or observedObj, statusItems, inputReplicas and output).\n" +
			"Results are compared as Karmada's harness compares them: quantities by value, dependencies and\n" +
			"components in any order, fields whose expected value is {{EXCLUDE}} not at all, and every\n" +
			"expected output key must be produced. Prints each failure with a diff (- expected, + got),\n" +
			"then \"N passed, M failed\"; exits 1 when any case failed, or when DIR holds no case.",
		Example: "  karta karmada test cmd/karta/testdata/karmada/pass\n" +
			"  karta karmada test cmd/karta/testdata/karmada/pass/example.io/v1/Gizmo",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			report, err := karmada.RunTestDir(cmd.Context(), dir)
			if err != nil {
				if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
					return reported(s, err)
				}
				return cannotRead(s, dir, err) // a missing or unreadable DIR is a usage error
			}
			if report.Passed+report.Failed == 0 {
				return nothingTested(s, dir, "<group>/<version>/<Kind>/customizations.yaml beside testdata/*-test.yaml")
			}
			for _, f := range report.Failures {
				fmt.Fprintln(s.out, f.String())
			}
			fmt.Fprintln(s.out, report.Summary())
			if report.Failed > 0 {
				return invalid()
			}
			return nil
		},
	}
}
