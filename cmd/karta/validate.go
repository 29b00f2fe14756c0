package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/internal/yamlerr"
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
			"as \"FILE:LINE: FIELD.PATH: message\" (\"FILE:LINE: document N: ...\" in a file of several),\n" +
			"LINE being where the field is. Exit 1 when any document has an error.\n" +
			"With --target karmada, each jq expression that karta karmada export cannot carry (it needs\n" +
			"gojq, which Karmada's runtime lacks) is reported as a warning with the reason (docs/jq.md).\n" +
			"With --crd FILE (CustomResourceDefinition manifests, repeatable) or --live (the CRDs of the\n" +
			"cluster the kubeconfig flags select), every path of the Karta that reads the workload object\n" +
			"is also checked against the openAPIV3Schema of the version the Karta names: the fields\n" +
			"exist, [] and [n] step into arrays, and each path yields what its role needs. A path the\n" +
			"schema refutes is an error, one it cannot decide a warning; each names the schema path.\n" +
			"An expression reading a reference ($name) is checked through the schema of the referenced\n" +
			"kind when a --crd file (or the cluster) has it, at schema paths that start with $name.\n" +
			"A Karta whose kind no --crd file defines is an error; under --live, a warning.",
		Example: "  karta validate examples/kartas/trainjob.yaml examples/kartas/pytorchjob.yaml\n" +
			"  karta validate --target karmada examples/kartas/pytorchjob.yaml\n" +
			"  karta validate --crd examples/tutorial-trainjob/crd.yaml examples/kartas/trainjob.yaml\n" +
			"  karta validate --live --context prod examples/kartas/trainjob.yaml",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			opts := interpreter.ValidateOptions()
			exportCheck := false
			switch target {
			case "":
			case "karmada":
				exportCheck = true
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
				code = max(code, validateFile(cmd.Context(), s, file, opts, exportCheck, src))
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
// schema source, each Karta is also checked against its CRD's schema;
// with exportCheck, each expression against the Karmada export of its
// Karta (--target karmada: its references' fallbacks bound).
func validateFile(ctx context.Context, s streams, file string, opts karta.ValidateOptions, exportCheck bool, src schemaSource) int {
	kf, err := loadKartaFile(s, file)
	if err != nil {
		var ee *exitError
		errors.As(err, &ee)
		return ee.code
	}
	code := exitOK
	for i, k := range kf.kartas {
		if exportCheck {
			opts.CheckExpr = karmada.ExportCheckFor(k)
		}
		checked, problems := karta.Analyze(k, opts)
		if src != nil && checked != nil {
			more, err := schemaProblems(ctx, src, checked)
			if err != nil {
				fmt.Fprintf(s.err, "%s: %s\n", kf.where(i), oneLine(err.Error()))
				code = exitInvalid
				continue
			}
			problems = append(problems, more...)
		}
		kf.printProblems(s.err, i, problems)
		if problems.HasErrors() {
			code = exitInvalid
			continue
		}
		fmt.Fprintf(s.out, "%s: ok\n", kf.where(i))
	}
	return code
}

// kartaFile is a Karta file as read: its Kartas, and where each is.
type kartaFile struct {
	source string
	kartas []*karta.Karta
	lines  *yamlerr.Lines
}

// loadKartaFile reads and loads a Karta file, or standard input for "-".
// Its load errors are printed (exit 1); a file that cannot be read is a
// usage error (exit 2).
func loadKartaFile(s streams, file string) (*kartaFile, error) {
	data, source, err := readInput(s, file, "the Karta")
	if err != nil {
		return nil, err
	}
	kartas, err := karta.Load(data, source)
	if err != nil {
		return nil, reportLoadError(s, source, err)
	}
	return &kartaFile{source: source, kartas: kartas, lines: yamlerr.NewLines(data)}, nil
}

// where names document i as every message does: the file alone for a
// single-document file, "FILE:LINE: document N" otherwise (LINE where the
// document starts).
func (k *kartaFile) where(i int) string {
	if len(k.kartas) <= 1 {
		return k.source
	}
	return yamlerr.Where(k.source, k.lines.Field(i+1, ""), i+1)
}

// printProblems prints the problems of document i, one a line, each at
// the line of its field: "FILE:LINE: document N: FIELD.PATH: message".
func (k *kartaFile) printProblems(w io.Writer, i int, problems karta.Problems) {
	doc := 0
	if len(k.kartas) > 1 {
		doc = i + 1
	}
	for _, p := range problems {
		fmt.Fprintln(w, yamlerr.Format(k.source, k.lines.Field(i+1, p.Field), doc, "", p.String()))
	}
}
