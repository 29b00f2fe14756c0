package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/interpreter"
)

// getOptions are the flags and arguments of karta get.
type getOptions struct {
	config cluster.ConfigFlags
	output string
	watch  bool
	// kind and name come from KIND[/NAME] (or KIND NAME).
	kind, name string
}

func newGetCmd(s streams) *cobra.Command {
	var o getOptions
	cmd := &cobra.Command{
		Use:   "get [KIND[/NAME]] [-n NAMESPACE | -A] [-o table|json|yaml] [-w]",
		Short: "List the workloads of a cluster: status, pods per component, gang groups",
		Long: "List the workload objects of every kind karta has a Karta for: the built-ins, and the\n" +
			"Kartas stored in the cluster (run.ai/v1alpha1 Karta, optimization.nvidia.com/v1alpha1\n" +
			"ResourceInterface), which replace the built-in for their kind. Each row shows the generic\n" +
			"status (InterpretStatus), the pods of each component instance as existing/expected\n" +
			"(GetPodSpecs replicas; a pod counts when the workload owns it and the Karta places it)\n" +
			"and each gang group's pods as present/minMember (GetGangGroups over the live pods).\n\n" +
			"KIND is a kind, its plural, singular or short name (optionally .GROUP), or a Karta's\n" +
			"name; kinds the cluster does not serve are skipped unless named. Without KIND, an\n" +
			"object that another listed object owns (a RayJob's RayCluster, a Deployment's\n" +
			"ReplicaSets, a Job's pods) is part of that object's row and not listed on its own; it\n" +
			"shows under its own kind. -w prints the list, then a row whenever a workload or one of\n" +
			"its pods changes, until interrupted.",
		Example: "  karta get -A\n" +
			"  karta get pytorchjobs -n nlp\n" +
			"  karta get pytorchjob/mistral-7b-sft -n nlp -o json\n" +
			"  karta get -A -w",
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.parseArgs(args); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runGet(ctx, s, &o)
		},
	}
	o.config.AddFlags(cmd.Flags(), true)
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "output `FMT`: table, json or yaml (default: table on a terminal, else json)")
	cmd.Flags().BoolVarP(&o.watch, "watch", "w", false, "after the list, print a row whenever a workload or its pods change, until interrupted")
	return cmd
}

// parseArgs reads KIND[/NAME] or KIND NAME.
func (o *getOptions) parseArgs(args []string) error {
	switch len(args) {
	case 0:
		return nil
	case 2:
		if strings.Contains(args[0], "/") {
			return usageError("there is a NAME in %s already; drop %s", args[0], args[1])
		}
		o.kind, o.name = args[0], args[1]
	default:
		o.kind, o.name, _ = strings.Cut(args[0], "/")
		if strings.Contains(args[0], "/") && o.name == "" {
			return usageError("%s: NAME is empty; use KIND/NAME", args[0])
		}
	}
	if o.kind == "" {
		return usageError("%s: KIND is empty; use KIND or KIND/NAME", args[0])
	}
	if o.name != "" && o.config.AllNamespaces {
		return usageError("-A lists all namespaces; a NAME needs one namespace (-n)")
	}
	return nil
}

func runGet(ctx context.Context, s streams, o *getOptions) error {
	format, err := outputFormat(o.output, []string{formatTable, formatJSON, formatYAML}, defaultFormat(s.out))
	if err != nil {
		return err
	}
	c, ns, reg, err := connect(ctx, s, &o.config)
	if err != nil {
		return err
	}
	kinds, err := c.Kinds(reg, o.kind)
	if err != nil {
		return clusterError(err)
	}
	// The Kartas' references resolve from the cluster, through a cache of
	// the kinds they reference, synced first.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	progs := make([]*interpreter.Program, len(kinds))
	for i, k := range kinds {
		progs[i] = k.Program
	}
	rc, err := syncedReferences(ctx, c, progs...)
	if err != nil {
		return clusterError(err)
	}
	ctx = withReferenceWarnings(ctx, s, resolverOrNil(rc))
	// Every kind at once: each workload once, at its top (a Deployment, not
	// also its ReplicaSets and pods; a RayJob, not also its RayCluster). A
	// KIND named lists all of that kind.
	opts := cluster.ListOptions{Namespace: ns, Name: o.name, Warn: warner(s), TopLevel: o.kind == ""}
	if rc != nil {
		// -w: a referenced object's change shows in its workloads' rows.
		opts.Referenced = func(changed func(string)) {
			rc.OnChange(func(_ schema.GroupVersionKind, u *unstructured.Unstructured) { changed(u.GetNamespace()) })
		}
	}
	p := &getPrinter{w: s.out, warn: warner(s), format: format, allNamespaces: o.config.AllNamespaces, one: o.name != "", now: now()}
	if o.watch {
		err = c.Watch(ctx, kinds, opts, p.initial, p.changed)
	} else {
		var ws []cluster.Workload
		if ws, err = c.List(ctx, kinds, opts); err == nil {
			err = p.list(ws)
		}
	}
	if err != nil {
		return clusterError(err)
	}
	if p.rows == 0 && format == formatTable && !o.watch {
		fmt.Fprintln(s.err, noWorkloads(ns))
	}
	return nil
}

// noWorkloads says that a table would be empty, as kubectl does, on
// standard error: standard output stays a table or nothing.
func noWorkloads(ns string) string {
	if ns == "" {
		return "No workloads found."
	}
	return fmt.Sprintf("No workloads found in namespace %s.", ns)
}

// connect opens the cluster the flags select and reads what every cluster
// command needs: the client, the namespace to work in, and the registry.
// Its errors are clusterErrors.
func connect(ctx context.Context, s streams, config *cluster.ConfigFlags) (*cluster.Client, string, *interpreter.Registry, error) {
	c, err := newClusterClient(s, config)
	if err != nil {
		return nil, "", nil, clusterError(err)
	}
	ns, err := config.ResolvedNamespace()
	if err != nil {
		return nil, "", nil, clusterError(err)
	}
	reg, err := clusterRegistry(ctx, s, c)
	if err != nil {
		return nil, "", nil, clusterError(err)
	}
	return c, ns, reg, nil
}

// clusterRegistry is the registry of a cluster: the built-ins and the
// cluster's Kartas, with a warning line for each one skipped.
func clusterRegistry(ctx context.Context, s streams, c *cluster.Client) (*interpreter.Registry, error) {
	base, err := builtinRegistry()
	if err != nil {
		return nil, err
	}
	return c.Registry(ctx, cluster.RegistryOptions{Base: base, Interpreter: interpreter.Options{PoolSize: 1}, Warn: warner(s)})
}

// warner prints warnings on standard error, one line each.
func warner(s streams) func(string) {
	return func(line string) { fmt.Fprintln(s.err, "karta: warning: "+oneLine(line)) }
}

// clusterError is exit 1 with the error on one line: the cluster, the
// kubeconfig, the kind or the object was wrong, not the command line.
func clusterError(err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return &exitError{code: exitInvalid, msg: oneLine(err.Error())}
}
