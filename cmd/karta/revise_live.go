package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
)

// liveFlags are revise's flags for a live object: --live KIND/NAME, the
// kubeconfig flags and --dry-run=server.
type liveFlags struct {
	target string
	dryRun string
	config cluster.ConfigFlags
}

// addLiveFlags adds the flags, and makes -f optional: --live replaces it.
func addLiveFlags(cmd *cobra.Command) *liveFlags {
	l := &liveFlags{}
	cmd.Flags().StringVar(&l.target, "live", "", "revise the live object `KIND/NAME` in the cluster instead of -f (a JSON Patch guarded by its resourceVersion)")
	cmd.Flags().StringVar(&l.dryRun, "dry-run", "", "with --live, `MODE` server: the API server checks and computes the change, and stores nothing")
	l.config.AddFlags(cmd.Flags(), false)
	if fl := cmd.Flags().Lookup("filename"); fl != nil {
		delete(fl.Annotations, cobra.BashCompOneRequiredFlag)
	}
	return l
}

// check validates the combination of flags, before anything is read.
func (l *liveFlags) check(filename string) error {
	if l.target == "" {
		if l.dryRun != "" {
			return usageError("--dry-run needs --live: a file is never written")
		}
		if filename == "" {
			return usageError(`required flag(s) "filename" not set`)
		}
		return nil
	}
	if filename != "" {
		return usageError("-f and --live cannot be used together: --live reads the object from the cluster")
	}
	if l.dryRun != "" && l.dryRun != "server" && l.dryRun != "none" {
		return usageError("--dry-run=%s: only server (or none) is supported", l.dryRun)
	}
	kind, name, ok := strings.Cut(l.target, "/")
	if !ok || kind == "" || name == "" {
		return usageError("--live %s: want KIND/NAME, e.g. pytorchjob/mistral-7b-sft", l.target)
	}
	return nil
}

// reviseLive is revise --live: the revisions are applied to the object in
// the cluster, and the printed object is the one the server returned.
func reviseLive(ctx context.Context, s streams, f *objectFlags, l *liveFlags, revisionsFile string, typ interpreter.PatchType, format string) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	kindArg, name, _ := strings.Cut(l.target, "/")
	revs, err := readRevisions(s, revisionsFile, typ)
	if err != nil {
		return err
	}
	scripts, err := readScripts(s, f.scripts)
	if err != nil {
		return err
	}
	c, ns, reg, err := connect(ctx, s, &l.config)
	if err != nil {
		return err
	}
	res, err := newResolver(s, f.karta, scripts, func() (*interpreter.Registry, error) { return reg, nil })
	if err != nil {
		return err
	}
	kind, err := liveKind(c, res, reg, kindArg, "--live "+kindArg)
	if err != nil {
		return err
	}
	p, err := res.program(kind.GVK())
	if err != nil {
		return reported(s, err)
	}
	where := fmt.Sprintf("%s %s", strings.ToLower(kind.GVK().Kind), name)
	if kind.Namespaced() {
		where = fmt.Sprintf("%s %s/%s", strings.ToLower(kind.GVK().Kind), ns, name)
	}
	out, err := c.Revise(ctx, kind, p, ns, name, revs, cluster.ReviseOptions{DryRun: l.dryRun == "server", BeforePatch: beforeLivePatch})
	if err != nil {
		reportError(s, where, err)
		return invalid()
	}
	for _, w := range warningLines(out.Warnings) {
		fmt.Fprintf(s.err, "%s: %s\n", where, w)
	}
	// Through YAML, so that -o yaml prints block YAML, as kubectl does.
	data, err := yaml.Marshal(out.Object.Object)
	if err != nil {
		return clusterError(err)
	}
	docs, err := object.Decode(data, where)
	if err != nil {
		return clusterError(err)
	}
	return writeResults(s.out, format, []result{{value: out.Patch, doc: docs[0], where: where, object: objectName(docs[0].Object)}})
}

// beforeLivePatch runs between the read and the patch of revise --live:
// nil, except in tests that play a concurrent writer.
var beforeLivePatch func(ctx context.Context, attempt int) error

// liveKind resolves a live KIND (revise's --live, describe's KIND/NAME)
// to exactly one kind the cluster serves; label names the argument in
// errors. The Kartas of a -k file take part: they may be for kinds no
// other Karta is.
func liveKind(c *cluster.Client, res *resolver, reg *interpreter.Registry, arg, label string) (*cluster.Kind, error) {
	if res.file != "" {
		withFile := interpreter.NewRegistry()
		for _, p := range reg.List() {
			withFile.Put(p)
		}
		for i := range res.kartas {
			p, err := res.compile(i)
			if err != nil {
				return nil, err
			}
			withFile.Put(p)
		}
		reg = withFile
	}
	kinds, err := c.Kinds(reg, arg)
	if err != nil {
		return nil, clusterError(err)
	}
	if len(kinds) > 1 {
		names := make([]string, len(kinds))
		for i, k := range kinds {
			names[i] = k.Mapping.Resource.GroupResource().String()
		}
		return nil, &exitError{code: exitInvalid, msg: fmt.Sprintf("%s: KIND matches %d kinds (%s); name one as KIND.GROUP", label, len(kinds), strings.Join(names, ", "))}
	}
	return kinds[0], nil
}
