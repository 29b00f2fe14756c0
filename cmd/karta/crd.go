package main

import (
	"github.com/spf13/cobra"

	"github.com/kartalua/karta/karta/crd"
)

func newCRDCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "crd",
		Short: "Print the Karta CustomResourceDefinition",
		Long: "Print the CustomResourceDefinition of the Karta kind (run.ai/v1alpha1), ready for kubectl apply -f -.\n" +
			"It is YAML as written, with no -o: a manifest for kubectl, not data (the chart installs the same).",
		Example: "  karta crd | kubectl apply --server-side -f -",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := s.out.Write(crd.Manifest)
			return err
		},
	}
}
