package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kartalua/karta/argo"
)

func newArgoCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "argo",
		Short: "Run Argo CD health scripts, resource actions and their tests",
		Long: "Run Argo CD's resource customizations as Argo CD runs them, in karta's sandbox and limits:\n" +
			"health scripts (any chunk that reads the global obj and returns {status=..., message=...}),\n" +
			"action discovery and resource actions, one object at a time or as a directory laid out as\n" +
			"Argo CD's resource_customizations with its tests.",
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newArgoHealthCmd(s), newArgoTestCmd(s), newArgoActionsCmd(s), newArgoActionCmd(s), newArgoExportCmd(s))
	return cmd
}

func newArgoHealthCmd(s streams) *cobra.Command {
	var script, filename, output string
	cmd := &cobra.Command{
		Use:   "health --script FILE.lua -f OBJECT",
		Short: "Run an Argo CD health script on an object",
		Long: "Run an Argo CD health script with each document of -f as the global obj and print what it\n" +
			"returned: {\"status\": ..., \"message\": ...}. status is Healthy, Progressing, Degraded,\n" +
			"Suspended, Missing or Unknown; empty when the script returned nil, {} or fields of the wrong\n" +
			"type (no assessment); Unknown with \"Lua returned an invalid health status\" for any other\n" +
			"status word, as Argo CD reads it.",
		Example: "  karta argo health --script scripts/argocd/kubeflow.org/PyTorchJob/health.lua -f examples/pytorchjob/running.yaml\n" +
			"  kubectl get pytorchjob mistral-7b-sft -o yaml | karta argo health --script scripts/argocd/kubeflow.org/PyTorchJob/health.lua -f - -o yaml",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := outputFormat(output, []string{formatJSON, formatYAML, formatTable}, defaultFormat(s.out))
			if err != nil {
				return err
			}
			src, err := os.ReadFile(script)
			if err != nil {
				return cannotRead(s, script, err)
			}
			// Named by its base name, as --script chunks are elsewhere:
			// script:health.lua:3: ...
			sc, err := argo.Compile(filepath.Base(script), string(src))
			if err != nil {
				return reported(s, err)
			}
			objs, err := readObjects(s, filename)
			if err != nil {
				return err
			}
			// As eachObject: the good documents answered, the bad named.
			var results []result
			failed := false
			for _, doc := range objs.items {
				where := objs.label(doc)
				h, err := sc.Run(cmd.Context(), doc.Object)
				if err != nil {
					reportError(s, where, err)
					failed = true
					continue
				}
				results = append(results, result{value: h, where: where, object: objectName(doc.Object), table: healthTable(h)})
			}
			return writeAnswered(s, format, results, failed)
		},
	}
	cmd.Flags().StringVar(&script, "script", "", "the Argo CD health script `FILE.lua`")
	cmd.Flags().StringVarP(&filename, "filename", "f", "", "the object `FILE` (YAML or JSON; one result per document; - reads standard input)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output `FMT`: json, yaml or table (default: table on a terminal, else json)")
	// The flags exist: no errors.
	_ = cmd.MarkFlagRequired("script")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

// healthTable prints a health as STATUS and MESSAGE, as the status
// command prints its own.
func healthTable(h argo.Health) func(w io.Writer) error {
	return func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "STATUS: %s\nMESSAGE: %s\n", cell(string(h.Status)), cell(h.Message))
		return err
	}
}
