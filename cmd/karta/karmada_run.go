package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/object"
)

// karmadaRunFlags are the flags of karta karmada run.
type karmadaRunFlags struct {
	operation     string
	filename      string
	observed      string
	statusItems   string
	replicas      int64
	customization string
	karta         string
	scripts       []string
	output        string
}

func newKarmadaRunCmd(s streams) *cobra.Command {
	var f karmadaRunFlags
	cmd := &cobra.Command{
		Use:   "run --operation OP -f OBJECT [--observed FILE] [--status-items FILE] [--replicas N] (-c CUSTOMIZATION | -k REF [--script FILE.lua])",
		Short: "Run one Karmada interpreter operation with a customization's Lua script or a Karta's hook",
		Long: "Run one operation on an object with the ResourceInterpreterCustomizations of -c, as Karmada\n" +
			"would, and print its results under the keys of Karmada's test files:\n" +
			"  InterpretReplica     replica, requires (left out when the script returns none)\n" +
			"  InterpretComponent   components\n" +
			"  ReviseReplica        revised          (needs --replicas)\n" +
			"  Retain               retained         (-f is the desired object, --observed the member's)\n" +
			"  AggregateStatus      aggregatedStatus (--status-items: a list of AggregatedStatusItem)\n" +
			"  InterpretStatus      status\n" +
			"  InterpretHealth      healthy\n" +
			"  InterpretDependency  dependencies\n" +
			"OP may also be the script's function name (GetReplicas, ReflectStatus...); case does not matter.\n" +
			"With -k instead of -c, the Karta's in-process Karmada hook runs (Retain is not one), with\n" +
			"its hooks overridden by each --script, as in the other commands.\n" +
			"Each document of -f (and each item of a List) is a case of its own, with one result each;\n" +
			"Retain takes one. -o table (the default on a terminal) prints each result for people: a\n" +
			"value as KEY: value, components and dependencies as tables, objects as indented YAML.",
		Example: "  karta karmada run --operation InterpretComponent -f examples/pytorchjob/running.yaml -c scripts/karmada/pytorchjob.yaml\n" +
			"  karta karmada run --operation InterpretHealth -f examples/jobset/running.yaml -k jobset -o table\n" +
			"  karta karmada run --operation Retain -f cmd/karta/testdata/karmada/gizmo.yaml \\\n" +
			"    --observed cmd/karta/testdata/karmada/gizmo-observed.yaml -c cmd/karta/testdata/karmada/pass/example.io/v1/Gizmo/customizations.yaml\n" +
			"  karta karmada run --operation ReviseReplica --replicas 5 -f cmd/karta/testdata/karmada/gizmo.yaml \\\n" +
			"    -c cmd/karta/testdata/karmada/pass/example.io/v1/Gizmo/customizations.yaml -o yaml",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runKarmada(cmd, s, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.operation, "operation", "", "the `OP` to run (InterpretReplica, Retain, ...)")
	fl.StringVarP(&f.filename, "filename", "f", "", "the object `FILE` (YAML or JSON; one result per document; - reads standard input); for Retain, the desired object")
	fl.StringVar(&f.observed, "observed", "", "the observed object `FILE` (Retain only)")
	fl.StringVar(&f.statusItems, "status-items", "", "a `FILE` with the list of AggregatedStatusItem (AggregateStatus only; left out: nil)")
	fl.Int64Var(&f.replicas, "replicas", 0, "the replica count `N` (ReviseReplica only)")
	fl.StringVarP(&f.customization, "customization", "c", "", "the ResourceInterpreterCustomization `FILE` (YAML or JSON; several documents are merged as Karmada merges them)")
	fl.StringVarP(&f.karta, "karta", "k", "", "the `REF` of a Karta (a file or a built-in's name) whose Karmada hook runs instead of -c")
	fl.StringArrayVar(&f.scripts, "script", nil, "with -k: a Lua chunk `FILE.lua` whose global functions override the Karta's hooks (repeatable; later wins)")
	fl.StringVarP(&f.output, "output", "o", "", "output `FMT`: json, yaml or table (default: table on a terminal, else json)")
	for _, name := range []string{"operation", "filename"} {
		_ = cmd.MarkFlagRequired(name) // the flags exist: no error
	}
	return cmd
}

func runKarmada(cmd *cobra.Command, s streams, f *karmadaRunFlags) error {
	format, err := outputFormat(f.output, []string{formatJSON, formatYAML, formatTable}, defaultFormat(s.out))
	if err != nil {
		return err
	}
	op, err := karmada.ParseOperation(f.operation)
	if err != nil {
		return usageError("--operation: %v", err)
	}
	if err := checkKarmadaFlags(cmd, op, f); err != nil {
		return err
	}
	var runOp karmadaOp
	if f.karta != "" {
		if runOp, err = kartaKarmadaOp(s, op, f); err != nil {
			return err
		}
	} else {
		in, err := readCustomizations(s, f.customization)
		if err != nil {
			return err
		}
		defer in.Close()
		runOp = func(ctx context.Context, tc *karmada.TestCase) ([]karmada.Result, error) {
			return in.RunOperation(ctx, op, tc)
		}
	}
	objs, err := readKarmadaObjects(s, f.filename, "the object")
	if err != nil {
		return err
	}
	base, err := readKarmadaInputs(s, op, f)
	if err != nil {
		return err
	}
	if op == karmada.OpRetain && len(objs) != 1 {
		return usageError("-f %s: Retain takes one desired object (against --observed), found %d", f.filename, len(objs))
	}
	// As every command that runs on each document: the good answered, the bad named.
	var results []result
	failed := false
	for _, o := range objs {
		tc := *base
		tc.DesiredObj = o.obj
		out, err := runOp(cmd.Context(), &tc)
		if err != nil {
			reportError(s, o.where, err)
			failed = true
			continue
		}
		value, keys := karmadaOutput(out)
		results = append(results, result{value: value, table: karmadaTable(value, keys), where: o.where, object: objectName(o.obj.Object)})
	}
	return writeAnswered(s, format, results, failed)
}

// karmadaOp runs the operation on one case.
type karmadaOp func(ctx context.Context, tc *karmada.TestCase) ([]karmada.Result, error)

// checkKarmadaFlags refuses inputs the operation does not take.
func checkKarmadaFlags(cmd *cobra.Command, op karmada.Operation, f *karmadaRunFlags) error {
	changed := cmd.Flags().Changed
	switch {
	case f.karta == "" && f.customization == "":
		// The message cobra gave when -c was the only way (kept: scripts
		// and the existing goldens match it); -k is the alternative.
		return usageError("give the hooks to run: -c CUSTOMIZATION (a ResourceInterpreterCustomization file) or -k REF (a Karta file or built-in name)")
	case f.karta != "" && f.customization != "":
		return usageError("-c and -k cannot be used together")
	case f.karta == "" && len(f.scripts) > 0:
		return usageError("--script overrides a Karta's hooks: use it with -k (a customization's script is its own)")
	case op == karmada.OpRetain && f.observed == "":
		return usageError("--observed is required for Retain")
	case op != karmada.OpRetain && changed("observed"):
		return usageError("--observed is only for Retain")
	case op != karmada.OpAggregateStatus && changed("status-items"):
		return usageError("--status-items is only for AggregateStatus")
	case op == karmada.OpReviseReplica && !changed("replicas"):
		return usageError("--replicas is required for ReviseReplica")
	case op != karmada.OpReviseReplica && changed("replicas"):
		return usageError("--replicas is only for ReviseReplica")
	case f.filename == "-" && (f.observed == "-" || f.statusItems == "-" || f.customization == "-"):
		return usageError("only one input can be standard input (-)")
	}
	return nil
}

// readCustomizations loads -c and compiles its scripts.
func readCustomizations(s streams, file string) (*karmada.Interpreter, error) {
	data, source, err := readInput(s, file, "the customizations")
	if err != nil {
		return nil, err
	}
	custs, err := karmada.Load(data, source)
	if err == nil && len(custs) == 0 {
		err = fmt.Errorf("%s: no ResourceInterpreterCustomization found", source)
	}
	if err != nil {
		return nil, reported(s, err)
	}
	in, err := karmada.NewInterpreter(custs, karmada.Options{})
	if err != nil {
		return nil, reported(s, err)
	}
	return in, nil
}

// readKarmadaInputs reads what every case of the command shares, as a
// Karmada test file would hold it: the observed object (Retain), the
// status items (AggregateStatus) and --replicas.
func readKarmadaInputs(s streams, op karmada.Operation, f *karmadaRunFlags) (*karmada.TestCase, error) {
	tc := &karmada.TestCase{Operation: string(op), InputReplicas: f.replicas}
	if op == karmada.OpRetain {
		objs, err := readKarmadaObjects(s, f.observed, "the observed object")
		if err != nil {
			return nil, err
		}
		if len(objs) != 1 {
			return nil, usageError("--observed %s: want one object, found %d", f.observed, len(objs))
		}
		tc.ObservedObj = objs[0].obj
	}
	if f.statusItems != "" {
		data, itemsSource, err := readInput(s, f.statusItems, "the status items")
		if err != nil {
			return nil, err
		}
		if tc.StatusItems, err = karmada.LoadStatusItems(data, itemsSource); err != nil {
			return nil, reported(s, err)
		}
	}
	return tc, nil
}

// karmadaObject is one object of a file, decoded as Karmada decodes
// objects, with where it is.
type karmadaObject struct {
	obj   *unstructured.Unstructured
	where string
}

// readKarmadaObjects reads the objects of a file as Karmada decodes them
// (sigs.k8s.io/yaml): each document, and each item of a List, named as
// every command names them (see objects.label).
func readKarmadaObjects(s streams, file, what string) ([]karmadaObject, error) {
	data, source, err := readInput(s, file, what)
	if err != nil {
		return nil, err
	}
	docs, err := karmada.LoadObjects(data, source)
	if err == nil && len(docs) == 0 {
		err = fmt.Errorf("%s: no object found (the input is empty)", source)
	}
	if err != nil {
		return nil, reported(s, err)
	}
	var items []*unstructured.Unstructured
	for _, u := range docs {
		if !u.IsList() {
			items = append(items, u)
			continue
		}
		_ = u.EachListItem(func(o runtime.Object) error { // its func never fails
			if it, ok := o.(*unstructured.Unstructured); ok {
				items = append(items, it)
			}
			return nil
		})
	}
	// Named as every command names a document or an item: by the same
	// documents and items read by karta's decoder, which keeps lines.
	var named *objects
	var placed []*object.Document
	if parsed, err := object.Decode(data, source); err == nil {
		named, placed = &objects{source: source, docs: len(parsed)}, object.Expand(parsed)
	}
	out := make([]karmadaObject, len(items))
	for i, it := range items {
		out[i] = karmadaObject{obj: it, where: source}
		if named != nil && len(placed) == len(items) {
			out[i].where = named.label(placed[i])
		}
	}
	if len(out) == 0 {
		fmt.Fprintf(s.err, "%s: no object found (the List has no items)\n", source)
		return nil, invalid()
	}
	return out, nil
}

// karmadaOutput is the results as a test file's output: objects as their
// content, a status as its JSON, requirements left out when there are none;
// keys are the results' names in order.
func karmadaOutput(results []karmada.Result) (map[string]any, []string) {
	out := make(map[string]any, len(results))
	var keys []string
	for _, r := range results {
		switch v := r.Value.(type) {
		case *unstructured.Unstructured:
			out[r.Name] = v.Object
		case *runtime.RawExtension:
			out[r.Name] = json.RawMessage(v.Raw)
		case *karmada.ReplicaRequirements:
			if v == nil {
				continue
			}
			out[r.Name] = v
		default:
			out[r.Name] = v
		}
		keys = append(keys, r.Name)
	}
	return out, keys
}

// karmadaTable prints a result for people: a scalar as "KEY: value",
// components and dependencies as tables, anything else (an object, a
// status, requirements) as indented YAML under "KEY:".
func karmadaTable(out map[string]any, keys []string) func(w io.Writer) error {
	return func(w io.Writer) error {
		for i, k := range keys {
			if i > 0 {
				fmt.Fprintln(w)
			}
			title := strings.ToUpper(camelWords(k))
			switch v := out[k].(type) {
			case bool, int32, int64, string:
				fmt.Fprintf(w, "%s: %v\n", title, v)
			case []karmada.Component:
				rows := [][]string{{"NAME", "REPLICAS", "RESOURCES"}}
				for _, c := range v {
					res := ""
					if c.ReplicaRequirements != nil {
						res = resourceList(c.ReplicaRequirements.ResourceRequest)
					}
					rows = append(rows, []string{c.Name, fmt.Sprint(c.Replicas), res})
				}
				if err := section(w, title, rows); err != nil {
					return err
				}
			case []karmada.DependentObjectReference:
				rows := [][]string{{"APIVERSION", "KIND", "NAMESPACE", "NAME"}}
				for _, d := range v {
					name := d.Name
					if d.LabelSelector != nil {
						name = metav1.FormatLabelSelector(d.LabelSelector)
					}
					rows = append(rows, []string{d.APIVersion, d.Kind, d.Namespace, name})
				}
				if err := section(w, title, rows); err != nil {
					return err
				}
			default:
				var buf strings.Builder
				if err := writeYAML(&buf, v); err != nil {
					return err
				}
				fmt.Fprintf(w, "%s:\n", title)
				for _, line := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
					fmt.Fprintf(w, "  %s\n", line)
				}
			}
		}
		return nil
	}
}

// camelWords splits a camelCase key into words: aggregatedStatus is
// "aggregated Status".
func camelWords(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// resourceList prints requests as cpu=1,memory=2Gi, sorted by name.
func resourceList(rl corev1.ResourceList) string {
	names := make([]string, 0, len(rl))
	for n := range rl {
		names = append(names, string(n))
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		q := rl[corev1.ResourceName(n)]
		parts[i] = n + "=" + q.String()
	}
	return strings.Join(parts, ",")
}

// kartaKarmadaOp runs op with the in-process Karmada hooks of the Karta
// -k names (for each object, the one for its kind when -k is a file of
// several), answering as runKarmada prints the customizations'.
func kartaKarmadaOp(s streams, op karmada.Operation, f *karmadaRunFlags) (karmadaOp, error) {
	if op == karmada.OpRetain {
		return nil, usageError("-k: a Karta has no Retain hook; use -c")
	}
	switch op {
	case karmada.OpInterpretReplica, karmada.OpInterpretComponent, karmada.OpReviseReplica, karmada.OpInterpretStatus,
		karmada.OpAggregateStatus, karmada.OpInterpretHealth, karmada.OpInterpretDependency:
	default:
		return nil, usageError("--operation %s: not supported with -k", op)
	}
	scripts, err := readScripts(s, f.scripts)
	if err != nil {
		return nil, err
	}
	res, err := newResolver(s, f.karta, scripts, builtinRegistry)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, tc *karmada.TestCase) ([]karmada.Result, error) {
		obj := tc.DesiredObj
		prog, err := res.program(obj.GroupVersionKind())
		if err != nil {
			return nil, err
		}
		p := karmada.ForProgram(prog)
		switch op {
		case karmada.OpInterpretReplica:
			n, req, err := p.GetReplicas(ctx, obj)
			return []karmada.Result{{Name: "replica", Value: n}, {Name: "requires", Value: req}}, err
		case karmada.OpInterpretComponent:
			comps, err := p.GetComponents(ctx, obj)
			return []karmada.Result{{Name: "components", Value: comps}}, err
		case karmada.OpReviseReplica:
			revised, err := p.ReviseReplica(ctx, obj, tc.InputReplicas)
			return []karmada.Result{{Name: "revised", Value: revised}}, err
		case karmada.OpInterpretStatus:
			status, err := p.ReflectStatus(ctx, obj)
			return []karmada.Result{{Name: "status", Value: status}}, err
		case karmada.OpAggregateStatus:
			aggregated, err := p.AggregateStatus(ctx, obj, tc.StatusItems)
			return []karmada.Result{{Name: "aggregatedStatus", Value: aggregated}}, err
		case karmada.OpInterpretHealth:
			healthy, err := p.InterpretHealth(ctx, obj)
			return []karmada.Result{{Name: "healthy", Value: healthy}}, err
		default: // OpInterpretDependency, checked above
			deps, err := p.GetDependencies(ctx, obj)
			return []karmada.Result{{Name: "dependencies", Value: deps}}, err
		}
	}, nil
}
