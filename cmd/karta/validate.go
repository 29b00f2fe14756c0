package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/karta"
)

func newValidateCmd(s streams) *cobra.Command {
	var target string
	var crds []string
	var live bool
	var config cluster.ConfigFlags
	cmd := &cobra.Command{
		Use:   "validate [--target karmada] [--crd FILE... | --live] FILE...",
		Short: "Validate Karta files, reporting every problem",
		Long: "Validate every document of each Karta file (YAML or JSON; - reads standard input).\n" +
			"Valid documents print \"FILE: ok\"; every problem of an invalid one prints on standard error\n" +
			"as \"FILE (document N): FIELD.PATH: message\". Exit 1 when any document has an error.\n" +
			"With --target karmada, each jq expression that karta karmada export cannot carry (it needs\n" +
			"gojq, which Karmada's runtime lacks) is reported as a warning with the reason (docs/jq.md).\n" +
			"With --crd FILE (CustomResourceDefinition manifests, repeatable) or --live (the CRDs of the\n" +
			"cluster the kubeconfig flags select), every path of the Karta that reads the workload object\n" +
			"is also checked against the openAPIV3Schema of the version the Karta names: the fields\n" +
			"exist, [] and [n] step into arrays, and each path yields what its role needs. A path the\n" +
			"schema refutes is an error, one it cannot decide a warning; each names the schema path.",
		Example: "  karta validate my-karta.yaml\n  karta validate --target karmada my-karta.yaml\n" +
			"  karta validate --crd examples/trainjob/crd.yaml examples/kartas/trainjob.yaml\n" +
			"  karta validate --live --context prod my-karta.yaml",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			opts := interpreter.ValidateOptions()
			switch target {
			case "":
			case "karmada":
				opts.CheckExpr = karmada.ExportCheck
			default:
				return usageError("--target %q: the one target is karmada", target)
			}
			var src schemaSource
			switch {
			case live && len(crds) > 0:
				return usageError("--crd and --live cannot be used together")
			case len(crds) > 0:
				var err error
				if src, err = readCRDs(s, crds); err != nil {
					return err
				}
			case live:
				client, server, err := newCRDClient(&config)
				if err != nil {
					return reported(s, err)
				}
				src = liveCRDs{crds: client, server: server}
			}
			code := exitOK
			for _, file := range files {
				code = max(code, validateFile(cmd.Context(), s, file, opts, src))
			}
			if code != exitOK {
				return &exitError{code: code}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&target, "target", "", "also report what the `BACKEND` (karmada: karta karmada export) cannot run, as warnings")
	cmd.Flags().StringArrayVar(&crds, "crd", nil, "check the Karta's paths against the schema in this CustomResourceDefinition `FILE` (repeatable; - reads standard input)")
	cmd.Flags().BoolVar(&live, "live", false, "check the Karta's paths against the schema of the cluster's CustomResourceDefinition")
	config.AddFlags(cmd.Flags(), false)
	return cmd
}

// validateFile validates one file and returns its exit code; with a
// schema source, each Karta is also checked against its CRD's schema.
func validateFile(ctx context.Context, s streams, file string, opts karta.ValidateOptions, src schemaSource) int {
	kartas, err := loadKartas(s, file)
	if err != nil {
		var ee *exitError
		errors.As(reportLoadError(s, file, err), &ee)
		return ee.code
	}
	code := exitOK
	for i, k := range kartas {
		where := documentLabel(file, i, len(kartas))
		checked, problems := karta.Analyze(k, opts)
		if src != nil && checked != nil {
			more, err := schemaProblems(ctx, src, checked)
			if err != nil {
				fmt.Fprintf(s.err, "%s: %s\n", where, oneLine(err.Error()))
				code = exitInvalid
				continue
			}
			problems = append(problems, more...)
		}
		for _, p := range problems {
			fmt.Fprintf(s.err, "%s: %s\n", where, p.String())
		}
		if problems.HasErrors() {
			code = exitInvalid
			continue
		}
		fmt.Fprintf(s.out, "%s: ok\n", where)
	}
	return code
}

// loadKartas loads a file, or standard input for "-".
func loadKartas(s streams, file string) ([]*karta.Karta, error) {
	if file == "-" {
		return karta.LoadReader(s.in, "<stdin>")
	}
	return karta.LoadFile(file)
}

// documentLabel names document i of n in a file as docs/cli.md says: the file
// alone for a single-document file, "FILE (document N)" otherwise.
func documentLabel(file string, i, n int) string {
	if n <= 1 {
		return file
	}
	return fmt.Sprintf("%s (document %d)", file, i+1)
}
