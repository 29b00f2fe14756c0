package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/kartalua/karta/argo"
)

func newArgoTestCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "test DIR",
		Short: "Run the tests of an Argo CD resource customization directory",
		Long: "Run a directory laid out as Argo CD's resource_customizations: <group>/<Kind>/health.lua\n" +
			"beside health_test.yaml (tests: [{inputPath, healthStatus: {status, message}}]), and\n" +
			"<group>/<Kind>/actions/ with discovery.lua, <action>/action.lua and action_test.yaml\n" +
			"(discoveryTests: [{inputPath, result}], actionTests: [{action, inputPath,\n" +
			"expectedOutputPath | expectedErrorMessage, parameters}]), compared as Argo CD's own tests\n" +
			"compare them (timestamps an action writes are masked). A \"_\" in a folder name is a\n" +
			"wildcard for health scripts; an exact folder wins over a wildcard one. Prints each failure,\n" +
			"then \"N passed, M failed\" (every health, discovery and action test counts once); exits\n" +
			"1 when any test failed.",
		Example: "  karta argo test scripts/argocd\n" +
			"  karta argo test scripts/argocd/jobset.x-k8s.io/JobSet",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := argo.RunTestDir(cmd.Context(), args[0])
			if err != nil {
				var pe *fs.PathError
				if errors.As(err, &pe) {
					return cannotRead(s, args[0], err)
				}
				return reported(s, err)
			}
			if rep.Passed+rep.Failed == 0 && len(rep.Problems) == 0 {
				return nothingTested(s, args[0], "<group>/<Kind>/health.lua beside health_test.yaml, or actions/action_test.yaml")
			}
			if err := printReport(s.out, rep); err != nil {
				return &exitError{code: exitInvalid, msg: fmt.Sprintf("cannot write the output: %v", err)}
			}
			if rep.Failed > 0 {
				return invalid()
			}
			return nil
		},
	}
}

// printReport prints the problems, then each failed test, then the
// summary line. Passing tests print nothing, as in go test.
func printReport(w io.Writer, rep *argo.Report) error {
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "--- FAIL: %s\n    error:    %s\n", p.Path, oneLine(p.Err.Error()))
	}
	for _, r := range rep.Results {
		if r.OK() {
			continue
		}
		fmt.Fprintf(w, "--- FAIL: %s", r.Name)
		if r.Script != "" {
			fmt.Fprintf(w, " (%s)", r.Script)
		}
		fmt.Fprintln(w)
		switch r.Kind {
		case argo.TestHealth:
			fmt.Fprintf(w, "    expected: %s\n", healthText(r.Want))
			if r.Err != nil {
				fmt.Fprintf(w, "    error:    %s\n", oneLine(r.Err.Error()))
			} else {
				fmt.Fprintf(w, "    actual:   %s\n", healthText(r.Got))
			}
		case argo.TestAction:
			if r.WantError != "" {
				fmt.Fprintf(w, "    expected error: %q\n", r.WantError)
				if r.Err != nil {
					fmt.Fprintf(w, "    error:    %q\n", argo.ArgoMessage(r.Err))
				} else {
					fmt.Fprintln(w, "    actual:   no error")
				}
				continue
			}
			fallthrough
		default:
			if r.Err != nil {
				fmt.Fprintf(w, "    error:    %s\n", oneLine(r.Err.Error()))
			}
			for _, m := range r.Mismatches {
				fmt.Fprintf(w, "    differs:  %s\n", oneLine(m))
			}
		}
	}
	_, err := fmt.Fprintf(w, "%d passed, %d failed\n", rep.Passed, rep.Failed)
	return err
}

// healthText quotes both fields, so an empty or space-padded message shows.
func healthText(h argo.Health) string {
	return fmt.Sprintf("status %q, message %q", h.Status, h.Message)
}
