package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
)

func newStatusCmd(s streams) *cobra.Command {
	var f objectFlags
	cmd := &cobra.Command{
		Use:   "status [-k REF] -f OBJECT",
		Short: "Print the generic status of a workload object (InterpretStatus)",
		Long: "Map the object's phase and conditions to a generic status: Failed, Completed, Resuming,\n" +
			"Suspending, Suspended, Degraded, Running or Initializing (in that order of precedence),\n" +
			"or Undefined when no status mapping holds. \"matched\" lists every status that holds.",
		Example: "  karta status -k examples/kartas/pytorchjob.yaml -f examples/pytorchjob/running.yaml\n" +
			"  kubectl get pytorchjob mistral-7b-sft -o yaml | karta status -f - -o json\n" +
			"  karta status -k examples/custom-hook/karta.yaml --script examples/custom-hook/status.lua -f examples/custom-hook/batchrun-degraded.yaml",
		Args: cobra.NoArgs,
		RunE: perObject(s, &f, func(ctx context.Context, p *interpreter.Program, doc *object.Document) (result, error) {
			res, err := p.InterpretStatus(ctx, asUnstructured(doc.Object))
			if err != nil {
				return result{}, err
			}
			return result{value: res, table: func(w io.Writer) error { return statusTable(w, res) }}, nil
		}),
	}
	f.addObject(cmd, "json, yaml or table (default: table on a terminal, else json)")
	f.addLive(cmd)
	return cmd
}

// statusTable prints the status, the matched statuses and the phase, then
// the conditions.
func statusTable(w io.Writer, res *interpreter.StatusResult) error {
	matched := make([]string, len(res.Matched))
	for i, m := range res.Matched {
		matched[i] = string(m)
	}
	fmt.Fprintf(w, "STATUS: %s\n", res.Status)
	fmt.Fprintf(w, "MATCHED: %s\n", cell(strings.Join(matched, ", ")))
	fmt.Fprintf(w, "PHASE: %s\n", cell(orDash(res.Phase)))
	if res.Message != "" {
		// An Argo CD health script's message: not part of the JSON
		// contract, but what a person wants to read.
		fmt.Fprintf(w, "MESSAGE: %s\n", cell(res.Message))
	}
	fmt.Fprintln(w)
	rows := [][]string{{"TYPE", "STATUS", "REASON", "MESSAGE"}}
	for _, c := range res.Conditions {
		rows = append(rows, []string{c.Type, orDash(c.Status), orDash(c.Reason), orDash(c.Message)})
	}
	return section(w, "CONDITIONS", rows)
}
