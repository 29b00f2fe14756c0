package main

import (
	"context"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
)

func newPodsCmd(s streams) *cobra.Command {
	var f objectFlags
	cmd := &cobra.Command{
		Use:   "pods [-k REF] -f OBJECT",
		Short: "Print the pod definitions of a workload object (GetPodSpecs)",
		Long: "Print the pod definition of every present instance of every pod-bearing component of the\n" +
			"object: its pod template, pod spec (and metadata) or fragments, and its replica counts.\n" +
			"Values are copied from the object as they are, so unknown fields and quantity spellings\n" +
			"survive. The table shows the style and the scale; -o json or -o yaml shows everything.",
		Example: "  karta pods -k examples/kartas/pytorchjob.yaml -f examples/pytorchjob/running.yaml\n" +
			"  kubectl get pytorchjob mistral-7b-sft -o yaml | karta pods -k examples/kartas/pytorchjob.yaml -f - -o json",
		Args: cobra.NoArgs,
		RunE: perObject(s, &f, func(ctx context.Context, p *interpreter.Program, doc *object.Document) (result, error) {
			res, err := p.GetPodSpecs(ctx, asUnstructured(doc.Object))
			if err != nil {
				return result{}, err
			}
			return result{value: res, table: func(w io.Writer) error { return podsTable(w, res) }}, nil
		}),
	}
	f.addObject(cmd, "json, yaml or table (default: table on a terminal, else json)")
	f.addLive(cmd)
	return cmd
}

// podsTable prints one row per item: which style defines the pod, and the
// replica counts.
func podsTable(w io.Writer, res *interpreter.PodSpecs) error {
	rows := [][]string{{"COMPONENT", "INSTANCE", "STYLE", "REPLICAS", "MIN", "MAX"}}
	for _, it := range res.Items {
		row := []string{it.Component, it.Instance, podStyle(it), "-", "-", "-"}
		if sc := it.Scale; sc != nil {
			row[3], row[4], row[5] = count(sc.Replicas), count(sc.MinReplicas), count(sc.MaxReplicas)
		}
		rows = append(rows, row)
	}
	return table(w, rows)
}

func podStyle(it interpreter.PodSpecItem) string {
	switch {
	case it.PodTemplateSpec != nil:
		return "podTemplateSpec"
	case it.PodSpec != nil:
		return "podSpec"
	case it.Fragmented != nil:
		return "fragmented"
	}
	return "-"
}

func count(n *int64) string {
	if n == nil {
		return "-"
	}
	return strconv.FormatInt(*n, 10)
}
