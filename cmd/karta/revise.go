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
	var revisionsFile, patchType string
	var live *liveFlags
	cmd := &cobra.Command{
		Use:   "revise [-k REF] (-f OBJECT | --live KIND/NAME) -r REVISIONS",
		Short: "Apply revisions to the pod definitions of a workload object (ReviseSpec)",
		Long: "Apply a list of revisions, each a patch over a component's PodTemplateSpec view, to the\n" +
			"object, and print the revised object (-o yaml, the default, or -o json) or the RFC 6902\n" +
			"JSON Patch from the input to it (-o patch). Only the fields the patches change are\n" +
			"written: the rest keeps its key order, comments and number spellings. REVISIONS is a YAML\n" +
			"or JSON list:\n\n" +
			"  - component: worker   # a pod-bearing component\n" +
			"    instance: \"*\"       # \"\" (one instance), an instance id, or \"*\" for all\n" +
			"    type: strategic     # merge, strategic or json; --type when left out\n" +
			"    patch: {spec: {containers: [{name: pytorch, image: pytorch:2.5}]}}\n\n" +
			"The types are kubectl patch's: merge is an RFC 7386 JSON merge patch (a null removes the\n" +
			"field, a list replaces the whole list); strategic is a Kubernetes strategic merge patch\n" +
			"with core/v1's merge keys (containers, env and volumes by name, volumeMounts by mountPath,\n" +
			"ports by containerPort) and $patch directives; json is a list of RFC 6902 operations\n" +
			"({op: replace, path: /spec/containers/0/image, value: ...}) with paths into the view. A\n" +
			"merge patch that replaces a list whose elements lose fields is reported as a warning on\n" +
			"standard error. Revisions are all or nothing per object: on any error, every error is\n" +
			"reported and that object is not printed.\n\n" +
			"With --live KIND/NAME (instead of -f) the object is read from the cluster, revised, and\n" +
			"patched with the JSON Patch, guarded by a test of the resourceVersion read: when the\n" +
			"object changed in between, karta reads it again and recomputes the patch. The output\n" +
			"is the object the server returned; --dry-run=server stores nothing.",
		Example: "  karta revise -k examples/kartas/pytorchjob.yaml -f examples/pytorchjob/running.yaml -r examples/pytorchjob/revisions.yaml\n" +
			"  karta revise -f examples/pytorchjob/running.yaml -r examples/revisions/pytorchjob-image.yaml --type strategic\n" +
			"  karta revise -k examples/kartas/trainjob.yaml -f examples/tutorial-trainjob/running.yaml -r examples/tutorial-trainjob/revisions.yaml -o patch\n" +
			"  karta revise --live pytorchjob/mistral-7b-sft -n nlp -r examples/pytorchjob/revisions.yaml --dry-run=server",
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
			typ, err := interpreter.ParsePatchType(patchType)
			if err != nil {
				return usageError("--type %s: want merge, strategic or json", patchType)
			}
			if live.target != "" && len(f.crds) > 0 {
				return usageError("--crd needs -f: --live objects are checked against the cluster's CRD by karta validate --live")
			}
			if live.target != "" {
				return reviseLive(cmd.Context(), s, &f, live, revisionsFile, typ, format)
			}
			if f.filename == "-" && revisionsFile == "-" {
				return usageError("-f and -r cannot both read standard input")
			}
			revs, err := readRevisions(s, revisionsFile, typ)
			if err != nil {
				return err
			}
			return eachObject(cmd.Context(), s, &f, format, func(ctx context.Context, p *interpreter.Program, doc *object.Document) (result, error) {
				return revise(ctx, p, doc, revs)
			})
		},
	}
	f.addObject(cmd, "yaml, json, or patch (the RFC 6902 JSON Patch)")
	cmd.Flags().StringVarP(&revisionsFile, "revisions", "r", "", "the revisions `FILE`: a YAML or JSON list of {component, instance, type, patch} (- reads standard input)")
	cmd.Flags().StringVar(&patchType, "type", string(interpreter.PatchMerge), "the patch `TYPE` of revisions that do not say: merge (RFC 7386), strategic (Kubernetes strategic merge patch) or json (RFC 6902)")
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
	return result{value: patch, doc: doc, warnings: warningLines(res.Warnings)}, nil
}

// warningLines renders ReviseSpec's warnings as validate prints its own:
// the place, "warning:", the message.
func warningLines(ws []interpreter.ReviseWarning) []string {
	lines := make([]string, len(ws))
	for i, w := range ws {
		lines[i] = w.Where() + ": warning: " + w.Message()
	}
	return lines
}
