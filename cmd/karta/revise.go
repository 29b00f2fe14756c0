package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
)

func newReviseCmd(s streams) *cobra.Command {
	var f objectFlags
	var revisionsFile string
	var live *liveFlags
	cmd := &cobra.Command{
		Use:   "revise [-k REF] (-f OBJECT | --live KIND/NAME) -r REVISIONS",
		Short: "Apply revisions to the pod definitions of a workload object (ReviseSpec)",
		Long: "Apply a list of revisions, each an RFC 7386 JSON merge patch over a component's\n" +
			"PodTemplateSpec view, to the object, and print the revised object (-o yaml, the default,\n" +
			"or -o json) or the RFC 6902 JSON Patch from the input to it (-o patch). Only the fields\n" +
			"the patches name change: the rest keeps its key order, comments and number spellings.\n" +
			"REVISIONS is a YAML or JSON list:\n\n" +
			"  - component: worker   # a pod-bearing component\n" +
			"    instance: \"*\"       # \"\" (one instance), an instance id, or \"*\" for all\n" +
			"    patch: {spec: {schedulerName: kai-scheduler}, metadata: {labels: {team: a}}}\n\n" +
			"A null in a patch removes the field. Revisions are all or nothing: on any error, every\n" +
			"error is reported and nothing is printed.\n\n" +
			"With --live KIND/NAME (instead of -f) the object is read from the cluster, revised, and\n" +
			"patched with the JSON Patch, guarded by a test of the resourceVersion read: when the\n" +
			"object changed in between, karta reads it again and recomputes the patch. The output\n" +
			"is the object the server returned; --dry-run=server stores nothing.",
		Example: "  karta revise -k examples/kartas/pytorchjob.yaml -f pytorchjob.yaml -r revisions.yaml\n" +
			"  karta revise -k pytorchjob.yaml -f pytorchjob.yaml -r revisions.yaml -o patch\n" +
			"  karta revise --live pytorchjob/mistral-7b-sft -n nlp -r revisions.yaml --dry-run=server",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// YAML is the default even on a terminal: the revised object
			// is meant for kubectl apply, and it keeps the input's layout.
			format, err := outputFormat(f.output, []string{formatYAML, formatJSON, formatPatch}, formatYAML)
			if err != nil {
				return err
			}
			if err := live.check(f.filename); err != nil {
				return err
			}
			if live.target != "" {
				return reviseLive(cmd.Context(), s, &f, live, revisionsFile, format)
			}
			if f.filename == "-" && revisionsFile == "-" {
				return usageError("-f and -r cannot both read standard input")
			}
			revs, err := readRevisions(s, revisionsFile)
			if err != nil {
				return err
			}
			return eachObject(cmd.Context(), s, &f, format, func(ctx context.Context, p *interpreter.Program, doc *object.Document) (result, error) {
				return revise(ctx, p, doc, revs)
			})
		},
	}
	f.addObject(cmd, "yaml, json, or patch (the RFC 6902 JSON Patch)")
	cmd.Flags().StringVarP(&revisionsFile, "revisions", "r", "", "the revisions `FILE`: a YAML or JSON list of {component, instance, patch} (- reads standard input)")
	_ = cmd.MarkFlagRequired("revisions") // the flag exists: no error
	live = addLiveFlags(cmd)
	return cmd
}

// revise runs ReviseSpec and applies its patch to the document's tree, so
// that the printed object is the input with exactly those writes.
func revise(ctx context.Context, p *interpreter.Program, doc *object.Document, revs []interpreter.Revision) (result, error) {
	res, err := p.ReviseSpec(ctx, asUnstructured(doc.Object), revs)
	if err != nil {
		return result{}, err
	}
	ops := make([]object.Op, len(res.Patch))
	for i, op := range res.Patch {
		ops[i] = object.Op{Op: op.Op, Path: op.Path, Value: op.Value}
	}
	if err := doc.ApplyToTree(ops); err != nil {
		return result{}, fmt.Errorf("karta %q: ReviseSpec: the patch does not apply to the object (a karta bug): %w", p.Name(), err)
	}
	patch := res.Patch
	if patch == nil {
		patch = []interpreter.PatchOp{}
	}
	return result{value: patch, doc: doc}, nil
}
