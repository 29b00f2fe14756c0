package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

func newValidateCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "validate FILE...",
		Short: "Validate Karta files, reporting every problem",
		Long: "Validate every document of each Karta file (YAML or JSON; - reads standard input).\n" +
			"Valid documents print \"FILE: ok\"; every problem of an invalid one prints on standard error\n" +
			"as \"FILE (document N): FIELD.PATH: message\". Exit 1 when any document has an error.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, files []string) error {
			code := exitOK
			for _, file := range files {
				code = max(code, validateFile(s, file))
			}
			if code != exitOK {
				return &exitError{code: code}
			}
			return nil
		},
	}
}

// validateFile validates one file and returns its exit code.
func validateFile(s streams, file string) int {
	kartas, err := loadKartas(s, file)
	if err != nil {
		var ee *exitError
		errors.As(reportLoadError(s, file, err), &ee)
		return ee.code
	}
	code := exitOK
	for i, k := range kartas {
		where := documentLabel(file, i, len(kartas))
		problems := karta.ValidateWithOptions(k, interpreter.ValidateOptions())
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
