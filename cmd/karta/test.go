package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kartalua/karta/internal/kartatest"
)

func newTestCmd(s streams) *cobra.Command {
	var update bool
	cmd := &cobra.Command{
		Use:   "test DIR",
		Short: "Run the Karta tests of a folder (karta_test.yaml)",
		Long: "Run every " + kartatest.FileName + " in DIR and below. A test file names the Karta under test\n" +
			"(karta: a file beside it or a built-in's name; without it, each object's built-in by kind),\n" +
			"optional scripts, and its cases: each runs the hooks on one object file and compares\n" +
			"what they give with what the case expects, inline or in golden files:\n\n" +
			"  karta: trainjob.karta.yaml\n" +
			"  tests:\n" +
			"  - object: running.yaml\n" +
			"    status: {status: Running, matched: [Running], phase: Running, golden: golden/running.status.json}\n" +
			"    pods: {count: 2, items: [{component: node, replicas: 4, images: [pytorch:2.5]}]}\n" +
			"    gang: {pods: pods.yaml, groups: [{name: pg-u-job, minMember: 4, pods: 4}], unmatched: 1}\n" +
			"    revise: {revisions: revisions.yaml, type: strategic, patch: golden/running.patch.json}\n\n" +
			"Any check may instead expect an error (error: text it contains). Prints a \"--- FAIL:\"\n" +
			"block with a diff for each failed check, then \"N passed, M failed\" (every check of every\n" +
			"case counts once); exits 1 when any failed. --update writes the expectations from the\n" +
			"current results (golden files, and the inline values a case states; a case that states\n" +
			"none gets its status and pod count), for review.",
		Example: "  karta test examples/pytorchjob\n" +
			"  karta test examples\n" +
			"  karta test examples/pytorchjob --update",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := kartatest.Run(cmd.Context(), args[0], kartatest.Options{Update: update})
			if err != nil {
				var pe *fs.PathError
				if errors.As(err, &pe) {
					return cannotRead(s, args[0], err)
				}
				return reported(s, err)
			}
			if rep.Passed+rep.Failed == 0 {
				return nothingTested(s, args[0], "a "+kartatest.FileName+" whose tests: list cases")
			}
			if err := printTestReport(s.out, rep); err != nil {
				return &exitError{code: exitInvalid, msg: fmt.Sprintf("cannot write the output: %v", err)}
			}
			if rep.Failed > 0 {
				return invalid()
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&update, "update", false, "write the expectations from the current results (golden files and inline values), for review")
	return cmd
}

// printTestReport prints each failed check with its diff, the files
// --update wrote, then the summary line. Passing checks print nothing, as
// in go test.
func printTestReport(w io.Writer, rep *kartatest.Report) error {
	for _, r := range rep.Results {
		if r.OK() {
			continue
		}
		fmt.Fprintf(w, "--- FAIL: %s\n", r.Name)
		for _, line := range strings.Split(r.Failure, "; ") {
			fmt.Fprintf(w, "    %s\n", oneLine(line))
		}
		if r.Diff != "" {
			for _, line := range strings.Split(strings.TrimSuffix(r.Diff, "\n"), "\n") {
				fmt.Fprintf(w, "    %s\n", line)
			}
		}
	}
	for _, f := range rep.Written {
		fmt.Fprintf(w, "wrote %s\n", f)
	}
	_, err := fmt.Fprintf(w, "%d passed, %d failed\n", rep.Passed, rep.Failed)
	return err
}
