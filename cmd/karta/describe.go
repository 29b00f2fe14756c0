package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
	"github.com/kartalua/karta/workload"
)

// describeOptions are the flags and arguments of karta describe.
type describeOptions struct {
	objectFlags
	podsFile string
	config   cluster.ConfigFlags
	// kind and name come from KIND/NAME (or KIND NAME): the live form.
	kind, name string
}

func newDescribeCmd(s streams) *cobra.Command {
	var o describeOptions
	cmd := &cobra.Command{
		Use:   "describe (-f OBJECT [--pods PODS] | KIND/NAME [-n NAMESPACE]) [-k REF] [-o table|json|yaml]",
		Short: "Show a workload as its Karta sees it: status, components, instances, replicas, pods, gangs",
		Long: "Show the tree of one workload object: its generic status and conditions (InterpretStatus);\n" +
			"its components, each present instance of a pod-bearing one with its style, replica counts\n" +
			"(expected across the workload, and existing), images (GetPodSpecs); the replicas and pods\n" +
			"placed in each instance with their phase, images and gang group; the gang groups with\n" +
			"their minimum and present members (GetGangGroups; a pod the gang leaves out, or any pod\n" +
			"of a Karta without gang instructions, is placed by PlacePods, without a group); and the\n" +
			"pods that belong nowhere, with the reason.\n\n" +
			"Offline, -f reads the object (one tree per document) and --pods the candidate pods: those\n" +
			"the Karta does not place, and those another object of the same kind controls, are listed\n" +
			"as unmatched. Without --pods the tree stops at the instances. Live, KIND/NAME reads the\n" +
			"object from the cluster (KIND as for karta get) and the pods it owns, directly or through\n" +
			"the objects in between (Jobs, ReplicaSets, StatefulSets), whether or not the Karta places\n" +
			"them. The table is kubectl describe's layout; -o json and -o yaml print the tree\n" +
			"(package workload's Node: kind, name, fields, children).",
		Example: "  karta describe -f examples/pytorchjob/running.yaml --pods examples/pytorchjob/pods.yaml\n" +
			"  karta describe -f examples/leaderworkerset/running.yaml --pods examples/leaderworkerset/pods.yaml -o yaml\n" +
			"  karta describe -k examples/kartas/trainjob.yaml -f examples/tutorial-trainjob/running.yaml --pods examples/tutorial-trainjob/pods.yaml\n" +
			"  karta describe pytorchjob/mistral-7b-sft -n nlp",
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := outputFormat(o.output, []string{formatTable, formatJSON, formatYAML}, defaultFormat(s.out))
			if err != nil {
				return err
			}
			if err := o.parseArgs(args); err != nil {
				return err
			}
			if o.kind != "" {
				ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
				defer stop()
				return describeLive(ctx, s, &o, format)
			}
			return describeFiles(cmd.Context(), s, &o, format)
		},
	}
	o.addKarta(cmd, kartaHelp)
	cmd.Flags().StringVarP(&o.filename, "filename", "f", "", "the workload object `FILE` (YAML or JSON; one tree per document; - reads standard input)")
	cmd.Flags().StringVar(&o.podsFile, "pods", "", "with -f, the Pods `FILE`: a YAML or JSON List, or several documents (- reads standard input)")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "output `FMT`: table, json or yaml (default: table on a terminal, else json)")
	cmd.Flags().BoolVar(&o.allowKindMismatch, "allow-kind-mismatch", false, "run the Karta on objects whose apiVersion and kind are not its root kind (refused by default)")
	cmd.Flags().StringArrayVar(&o.crds, "crd", nil, "with -f, "+crdHelp)
	o.addRefs(cmd)
	o.config.AddFlags(cmd.Flags(), false)
	return cmd
}

// parseArgs reads KIND/NAME or KIND NAME, and checks them against -f.
func (o *describeOptions) parseArgs(args []string) error {
	switch len(args) {
	case 0:
		if o.filename == "" {
			return usageError("describe needs an object: -f FILE, or KIND/NAME from the cluster")
		}
		return nil
	case 2:
		if strings.Contains(args[0], "/") {
			return usageError("there is a NAME in %s already; drop %s", args[0], args[1])
		}
		o.kind, o.name = args[0], args[1]
	default:
		var ok bool
		o.kind, o.name, ok = strings.Cut(args[0], "/")
		if !ok {
			return usageError("%s: want KIND/NAME (or KIND NAME), e.g. pytorchjob/mistral-7b-sft", args[0])
		}
	}
	switch {
	case o.kind == "" || o.name == "":
		return usageError("%s: want KIND/NAME, e.g. pytorchjob/mistral-7b-sft", strings.Join(args, " "))
	case o.filename != "":
		return usageError("-f and KIND/NAME cannot be used together: KIND/NAME reads the object from the cluster")
	case o.podsFile != "":
		return usageError("--pods needs -f: KIND/NAME reads the object's pods from the cluster")
	case len(o.crds) > 0:
		return usageError("--crd needs -f: KIND/NAME is checked against the cluster's CRD by karta validate --live")
	}
	return nil
}

// describeFiles is describe -f: a tree per document, with the pods of
// --pods, if given.
func describeFiles(ctx context.Context, s streams, o *describeOptions, format string) error {
	if o.filename == "-" && o.podsFile == "-" {
		return usageError("-f and --pods cannot both read standard input")
	}
	var pods []*unstructured.Unstructured
	if o.podsFile != "" {
		var err error
		if pods, err = readPods(s, o.podsFile); err != nil {
			return err
		}
		if pods == nil {
			pods = []*unstructured.Unstructured{} // given, and empty
		}
	}
	return eachObject(ctx, s, &o.objectFlags, format, func(ctx context.Context, p *interpreter.Program, doc *object.Document) (result, error) {
		tree, err := workload.Describe(ctx, p, asUnstructured(doc.Object), pods)
		if tree == nil {
			return result{}, err
		}
		r := result{value: tree, table: func(w io.Writer) error { return describeTable(w, tree) }}
		if err != nil {
			return r, err // the status it has, and the error (GetPodSpecs's)
		}
		if len(pods) > 0 && placed(tree) == 0 {
			r.warnings = append(r.warnings, fmt.Sprintf("warning: none of the %d pods of %s is placed in this object; see Unmatched Pods", len(pods), o.podsFile))
		}
		return r, nil
	})
}

// placed counts the pods the tree places (the Pod nodes under instances).
func placed(tree *workload.Node) int {
	n := 0
	workload.Walk(tree, func(node *workload.Node, depth int) bool {
		if node.Kind == workload.KindPod && depth > 1 {
			n++
		}
		return true
	})
	return n
}

// describeLive is describe KIND/NAME: the object and the pods it owns,
// read from the cluster.
func describeLive(ctx context.Context, s streams, o *describeOptions, format string) error {
	scripts, err := readScripts(s, o.scripts)
	if err != nil {
		return err
	}
	c, ns, reg, err := connect(ctx, s, &o.config)
	if err != nil {
		return err
	}
	res, err := newResolver(s, o.karta, scripts, func() (*interpreter.Registry, error) { return reg, nil })
	if err != nil {
		return err
	}
	res.allowKindMismatch = o.allowKindMismatch
	kind, err := liveKind(c, res, reg, o.kind, o.kind)
	if err != nil {
		return err
	}
	p, err := res.program(kind.GVK())
	if err != nil {
		return reported(s, err)
	}
	obj, err := c.Get(ctx, kind, ns, o.name)
	if err != nil {
		return clusterError(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rc, err := syncedReferences(ctx, c, p)
	if err != nil {
		return clusterError(err)
	}
	ctx = withReferenceWarnings(ctx, s, resolverOrNil(rc))
	pods, err := c.PodsOf(ctx, obj, warner(s))
	if err != nil {
		return clusterError(err)
	}
	tree, err := workload.Describe(ctx, p, obj, pods)
	where := fmt.Sprintf("%s %s", strings.ToLower(kind.GVK().Kind), o.name)
	if kind.Namespaced() {
		where = fmt.Sprintf("%s %s/%s", strings.ToLower(kind.GVK().Kind), ns, o.name)
	}
	if err != nil {
		reportError(s, where, err)
		if tree == nil {
			return invalid()
		}
	}
	return writeAnswered(s, format, []result{{value: tree, table: func(w io.Writer) error { return describeTable(w, tree) }, where: where, object: objectName(obj.Object)}}, err != nil)
}
