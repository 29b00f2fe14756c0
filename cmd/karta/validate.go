package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/karta"
)

func newValidateCmd(s streams) *cobra.Command {
	var target string
	cmd := &cobra.Command{
		Use:   "validate [--target karmada] FILE...",
		Short: "Validate Karta files, reporting every problem",
		Long: "Validate every document of each Karta file (YAML or JSON; - reads standard input).\n" +
			"Valid documents print \"FILE: ok\"; every problem of an invalid one prints on standard error\n" +
			"as \"FILE (document N): FIELD.PATH: message\". Exit 1 when any document has an error.\n" +
			"With --target karmada, each jq expression that karta karmada export cannot carry (it needs\n" +
			"gojq, which Karmada's runtime lacks) is reported as a warning with the reason (docs/jq.md).",
		Example: "  karta validate my-karta.yaml\n  karta validate --target karmada my-karta.yaml",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, files []string) error {
			opts := interpreter.ValidateOptions()
			switch target {
			case "":
			case "karmada":
				opts.CheckExpr = karmada.ExportCheck
			default:
				return usageError("--target %q: the one target is karmada", target)
			}
			code := exitOK
			for _, file := range files {
				code = max(code, validateFile(s, file, opts))
			}
			if code != exitOK {
				return &exitError{code: code}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&target, "target", "", "also report what the `BACKEND` (karmada: karta karmada export) cannot run, as warnings")
	return cmd
}

// validateFile validates one file and returns its exit code.
func validateFile(s streams, file string, opts karta.ValidateOptions) int {
	kartas, err := loadKartas(s, file)
	if err != nil {
		var ee *exitError
		errors.As(reportLoadError(s, file, err), &ee)
		return ee.code
	}
	code := exitOK
	for i, k := range kartas {
		where := documentLabel(file, i, len(kartas))
		problems := karta.ValidateWithOptions(k, opts)
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

// documentLabel names document i of n in a file as CLI.md says: the file
// alone for a single-document file, "FILE (document N)" otherwise.
func documentLabel(file string, i, n int) string {
	if n <= 1 {
		return file
	}
	return fmt.Sprintf("%s (document %d)", file, i+1)
}
