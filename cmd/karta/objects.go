package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/internal/yamlerr"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
)

// stdinSource names standard input in every message (-f -, --pods -,
// -r -, validate -, ...).
const stdinSource = "<stdin>"

// objectFlags are the flags of the commands that interpret an object
// (docs/cli.md, "What every command shares").
type objectFlags struct {
	karta    string
	scripts  []string
	filename string
	output   string
	// allowKindMismatch runs the Karta on objects of another kind.
	allowKindMismatch bool
	// crds are the --crd files the Kartas' paths are checked against.
	crds []string
	// refs are the --ref files: the objects a Karta's references resolve
	// to, offline.
	refs []string
	// live resolves the references from the cluster of config instead
	// (--live on the data commands).
	live   bool
	config cluster.ConfigFlags
}

// addLive adds --live and the kubeconfig flags it reads: the references
// resolved from the cluster.
func (f *objectFlags) addLive(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.live, "live", false, "resolve the Karta's references from the cluster (--kubeconfig, --context) instead of --ref files (docs/karta.md, \"References\")")
	cmd.Flags().StringVar(&f.config.Kubeconfig, "kubeconfig", "", "with --live, the kubeconfig `FILE` (default $KUBECONFIG or ~/.kube/config)")
	cmd.Flags().StringVar(&f.config.Context, "context", "", "with --live, the kubeconfig `CONTEXT` (default its current context)")
}

// refHelp is --ref's help.
const refHelp = "a `FILE` of objects (YAML or JSON; a List or several documents) the Karta's references resolve to, offline (repeatable; docs/karta.md, \"References\")"

func (f *objectFlags) addRefs(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.refs, "ref", nil, refHelp)
}

// kartaHelp is -k's help for the commands that interpret an object.
const kartaHelp = "the `REF` of the Karta: a file (YAML or JSON) or a built-in's name; default: the built-in for the object's kind"

func (f *objectFlags) addKarta(cmd *cobra.Command, help string) {
	cmd.Flags().StringVarP(&f.karta, "karta", "k", "", help)
	cmd.Flags().StringArrayVar(&f.scripts, "script", nil, "a Lua chunk `FILE.lua` whose global functions override the Karta's hooks (repeatable; later wins)")
}

func (f *objectFlags) addObject(cmd *cobra.Command, outputHelp string) {
	f.addKarta(cmd, kartaHelp)
	cmd.Flags().StringVarP(&f.filename, "filename", "f", "", "the workload object `FILE` (YAML or JSON; one result per document; - reads standard input)")
	cmd.Flags().StringVarP(&f.output, "output", "o", "", "output `FMT`: "+outputHelp)
	cmd.Flags().BoolVar(&f.allowKindMismatch, "allow-kind-mismatch", false, "run the Karta on objects whose apiVersion and kind are not its root kind (refused by default)")
	cmd.Flags().StringArrayVar(&f.crds, "crd", nil, crdHelp)
	f.addRefs(cmd)
	_ = cmd.MarkFlagRequired("filename") // the flag exists: no error
}

// result is what one document produced, ready to print in any format.
type result struct {
	// value prints as JSON or YAML (and, for revise, is the patch).
	value any
	// table prints it for people.
	table func(w io.Writer) error
	// doc, when set, is the revised object: YAML and JSON render from its
	// tree, so that its untouched parts keep their key order and spelling.
	doc *object.Document
	// docs, when set, print as YAML one document each (podgroups' objects).
	docs []any
	// where names the document: FILE or FILE (document N).
	where string
	// warnings are printed on standard error, each after where.
	warnings []string
	// object names the object: Kind namespace/name.
	object string
	// headed prints the table under its heading even when it is the only
	// result: the one answered document of several.
	headed bool
}

// objectFunc computes one document's result with its Karta's Program.
type objectFunc func(ctx context.Context, p *interpreter.Program, doc *object.Document) (result, error)

// eachObject runs fn on every document of -f with its Karta and prints
// the results. A document that fails does not hide the others (docs/cli.md,
// "Several documents"): the good ones are answered on standard output, each
// bad one is named on standard error (FILE:LINE: document N), and the exit
// code is 1, so that a script still knows the answer is not whole.
func eachObject(ctx context.Context, s streams, f *objectFlags, format string, fn objectFunc) error {
	scripts, err := readScripts(s, f.scripts)
	if err != nil {
		return err
	}
	res, err := newResolver(s, f.karta, scripts, builtinRegistry)
	if err != nil {
		return err
	}
	res.allowKindMismatch = f.allowKindMismatch
	for _, c := range f.crds {
		if c == "-" && f.filename == "-" {
			return usageError("-f and --crd cannot both read standard input")
		}
	}
	schemas, err := newSchemaWarner(s, f.crds)
	if err != nil {
		return err
	}
	if f.live && len(f.refs) > 0 {
		return usageError("--live and --ref cannot be used together: --live resolves the references from the cluster")
	}
	if !f.live && (f.config.Kubeconfig != "" || f.config.Context != "") {
		return usageError("--kubeconfig and --context are for --live")
	}
	static, err := readRefs(s, f.refs, f.filename)
	if err != nil {
		return err
	}
	objs, err := readObjects(s, f.filename)
	if err != nil {
		return err
	}
	refs := interpreter.Resolver(static)
	if f.live {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		if refs, err = clusterResolver(ctx, s, f, res, objs); err != nil {
			return err
		}
	}
	var results []result
	failed := false
	for _, doc := range objs.items {
		where := objs.label(doc)
		var refWarnings []string
		dctx := interpreter.WithResolver(ctx, refs, func(w interpreter.ReferenceWarning) {
			refWarnings = append(refWarnings, w.String())
		})
		r, err := runOne(dctx, res, doc, fn, func(p *interpreter.Program) { schemas.warn(ctx, s, where, p) })
		seen := map[string]bool{} // every hook a command calls resolves again
		for _, w := range refWarnings {
			if !seen[w] {
				seen[w] = true
				fmt.Fprintf(s.err, "%s: warning: %s\n", where, oneLine(w))
			}
		}
		if err != nil {
			reportError(s, where, err)
			failed = true
			if r.value == nil {
				continue
			}
			// A partial result (describe's status when GetPodSpecs
			// failed) is printed beside its error.
		}
		r.where, r.object = where, objectName(doc.Object)
		for _, w := range r.warnings {
			fmt.Fprintf(s.err, "%s: %s\n", where, oneLine(w))
		}
		results = append(results, r)
	}
	return writeAnswered(s, format, results, failed)
}

// writeAnswered prints the results of the documents that were answered and
// returns exit 1 when any other document failed (its error is on standard
// error already): a good document is never hidden by a bad one, and a
// partial answer never exits 0.
func writeAnswered(s streams, format string, results []result, failed bool) error {
	if failed && len(results) == 1 {
		results[0].headed = true // which document of the input it is
	}
	if len(results) > 0 {
		if err := writeResults(s.out, format, results); err != nil {
			return err
		}
	}
	if failed {
		return invalid()
	}
	return nil
}

// runOne runs fn on one document with its Karta's Program; check sees the
// Program first (the --crd schema warnings).
func runOne(ctx context.Context, res *resolver, doc *object.Document, fn objectFunc, check func(*interpreter.Program)) (result, error) {
	p, err := res.program(asUnstructured(doc.Object).GroupVersionKind())
	if err != nil {
		return result{}, err
	}
	check(p)
	return fn(ctx, p, doc)
}

// reportError prints an error of one document, one line per problem, each
// naming the document. A *interpreter.ReviseError holds every error of a
// revision: each gets its own line, with what wraps it (karta "x":
// ReviseSpec:) in front.
func reportError(s streams, where string, err error) {
	var ee *exitError
	if errors.As(err, &ee) && ee.msg == "" {
		return // printed already
	}
	var ke *interpreter.KindMismatchError
	if errors.As(err, &ke) {
		fmt.Fprintf(s.err, "%s: %s (--allow-kind-mismatch runs it anyway)\n", where, oneLine(err.Error()))
		return
	}
	var re *interpreter.ReviseError
	if errors.As(err, &re) && len(re.Errors) > 0 {
		prefix, _ := strings.CutSuffix(err.Error(), re.Error())
		if prefix == err.Error() {
			prefix = "" // wrapped in an unexpected way: the errors alone
		}
		for _, e := range re.Errors {
			fmt.Fprintf(s.err, "%s: %s%s\n", where, prefix, oneLine(e.Error()))
		}
		return
	}
	fmt.Fprintf(s.err, "%s: %s\n", where, oneLine(err.Error()))
}

// reported prints an error that is not printed yet, on one line, and
// returns it as exit 1.
func reported(s streams, err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	fmt.Fprintln(s.err, oneLine(err.Error()))
	return invalid()
}

// oneLine keeps a problem on one line (docs/cli.md): a Lua error may quote the
// user's multi-line text.
func oneLine(msg string) string {
	return strings.NewReplacer("\r\n", `\n`, "\n", `\n`, "\r", `\n`).Replace(strings.TrimRight(msg, "\n"))
}

// objectName is "Kind namespace/name", as far as the object says.
func objectName(obj map[string]any) string {
	u := asUnstructured(obj)
	name := u.GetName()
	if ns := u.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return strings.TrimSpace(u.GetKind() + " " + name)
}

func asUnstructured(obj map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: obj}
}

// readInput reads a file named by a flag, or standard input for "-"; what
// names what is read ("the object", "the pods") in the hint printed when
// standard input is a terminal, where karta would otherwise seem to hang.
// A file that cannot be read is a usage error (exit 2), reported as
// validate reports it.
func readInput(s streams, file, what string) (data []byte, source string, err error) {
	r, source := s.in, stdinSource
	if file != "-" {
		fh, err := os.Open(file)
		if err != nil {
			return nil, file, cannotRead(s, file, err)
		}
		defer func() { _ = fh.Close() }() // read-only: a close error changes nothing
		r, source = fh, file
	} else if isTerminal(s.in) {
		fmt.Fprintf(s.err, "karta: reading %s from standard input (Ctrl-D to end)\n", what)
	}
	// One byte over the limit is enough for object.Decode to refuse the
	// input with a size error instead of reading an endless stream.
	data, err = io.ReadAll(io.LimitReader(r, object.MaxBytes+1))
	if err != nil {
		return nil, source, cannotRead(s, source, err)
	}
	return data, source, nil
}

func cannotRead(s streams, source string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is the source already
	}
	fmt.Fprintf(s.err, "%s: cannot read: %v\n", source, err)
	return &exitError{code: exitUsage}
}

// objects are the objects of -f: each document, and each item of a List
// (as kubectl get -o yaml prints) on its own.
type objects struct {
	source string
	// docs is the number of documents in the input.
	docs  int
	items []*object.Document
}

// label names an object in messages, as yamlerr places a problem: the
// file alone for a single document; "FILE:LINE: document N" among several
// (LINE where the document starts); ": item M" after it for the items of a
// List ("FILE:LINE: item M" with the item's line in a single document).
func (o *objects) label(d *object.Document) string {
	return o.at(d, o.docs > 1 || d.Item > 0)
}

// at names an object as label does, with its line when withLine is set:
// a problem of that object, not of the file, names its line even in a file
// of one document.
func (o *objects) at(d *object.Document, withLine bool) string {
	doc, line := 0, 0
	if o.docs > 1 {
		doc = d.Index
	}
	if withLine {
		line = d.Line
	}
	where := yamlerr.Where(o.source, line, doc)
	if d.Item > 0 {
		where += fmt.Sprintf(": item %d", d.Item)
	}
	return where
}

// decodeInput reads and decodes a file of objects (what names it in
// readInput's errors); a decoding error is printed, and is exit 1.
func decodeInput(s streams, file, what string) ([]*object.Document, string, error) {
	data, source, err := readInput(s, file, what)
	if err != nil {
		return nil, "", err
	}
	docs, err := object.Decode(data, source)
	if err != nil {
		fmt.Fprintln(s.err, oneLine(err.Error()))
		return nil, "", invalid()
	}
	return docs, source, nil
}

// readObjects decodes the objects of -f.
func readObjects(s streams, file string) (*objects, error) {
	docs, source, err := decodeInput(s, file, "the object")
	if err != nil {
		return nil, err
	}
	items := object.Expand(docs)
	if len(items) == 0 {
		fmt.Fprintf(s.err, "%s: no object found (the List has no items)\n", source)
		return nil, invalid()
	}
	return &objects{source: source, docs: len(docs), items: items}, nil
}

// readRefs reads the --ref files into a static resolver (an empty one
// without files: every reference absent, with a warning).
func readRefs(s streams, files []string, objectFile string) (*interpreter.StaticResolver, error) {
	var objs []*unstructured.Unstructured
	for _, file := range files {
		if file == "-" && objectFile == "-" {
			return nil, usageError("-f and --ref cannot both read standard input")
		}
		docs, _, err := decodeInput(s, file, "the referenced objects")
		if err != nil {
			return nil, err
		}
		for _, d := range object.Expand(docs) {
			objs = append(objs, asUnstructured(d.Object))
		}
	}
	return interpreter.NewStaticResolver(objs...), nil
}

// readPods reads --pods: Pods in a List, in several documents, or both.
// An object that is not a v1 Pod is refused, each named with its line:
// matched as a pod, a Deployment or a Job would place a wrong pod in a gang.
func readPods(s streams, file string) ([]*unstructured.Unstructured, error) {
	docs, source, err := decodeInput(s, file, "the pods")
	if err != nil {
		return nil, err
	}
	objs := &objects{source: source, docs: len(docs), items: object.Expand(docs)}
	var pods []*unstructured.Unstructured
	failed := false
	for _, d := range objs.items {
		u := asUnstructured(d.Object)
		if u.GetAPIVersion() != "v1" || u.GetKind() != "Pod" {
			fmt.Fprintf(s.err, "%s: --pods takes v1 Pods; this is %s\n", objs.at(d, true), describeObject(u))
			failed = true
			continue
		}
		pods = append(pods, u)
	}
	if failed {
		return nil, invalid()
	}
	return pods, nil
}

// describeObject is "apps/v1 Deployment ns/name", or what of it the object
// says.
func describeObject(u *unstructured.Unstructured) string {
	what := strings.TrimSpace(u.GetAPIVersion() + " " + objectName(u.Object))
	if u.GetKind() == "" {
		what = strings.TrimSpace("an object without a kind " + u.GetName())
	}
	return what
}

// readScripts reads the --script files; each chunk is named by its base
// name in errors (script:fix.lua).
func readScripts(s streams, files []string) ([]interpreter.Script, error) {
	scripts := make([]interpreter.Script, 0, len(files))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, cannotRead(s, file, err)
		}
		// A global that is not a hook (a misspelt InterpretStatus, say) is
		// never called: warn, as validate does for spec.luaScript. Errors
		// (a chunk that does not compile) are the compiler's to report.
		for _, p := range interpreter.CheckScript(string(data)).Warnings() {
			fmt.Fprintf(s.err, "%s: %s\n", file, p.String())
		}
		scripts = append(scripts, interpreter.Script{Name: filepath.Base(file), Source: string(data)})
	}
	return scripts, nil
}

// readRevisions reads -r: one YAML or JSON list of revisions; typ is the
// type of those that do not say (--type).
func readRevisions(s streams, file string, typ interpreter.PatchType) ([]interpreter.Revision, error) {
	data, source, err := readInput(s, file, "the revisions")
	if err != nil {
		return nil, err
	}
	revs, err := decodeRevisions(data, source, typ)
	if err != nil {
		fmt.Fprintln(s.err, oneLine(err.Error()))
		return nil, invalid()
	}
	return revs, nil
}

// decodeRevisions decodes a list of revisions; its errors name the source
// (and the line, when the YAML is at fault).
func decodeRevisions(data []byte, source string, typ interpreter.PatchType) ([]interpreter.Revision, error) {
	v, err := object.DecodeValue(data, source)
	var de *object.DecodeError
	switch {
	case errors.Is(err, object.ErrEmpty):
		return nil, &object.DecodeError{Source: source, Message: "no revisions found (the input is empty); want a list of {component, instance, type, patch}"}
	case errors.As(err, &de):
		if !strings.HasPrefix(de.Message, "invalid YAML") {
			de.Message += "; want a single list of {component, instance, type, patch}"
		}
		return nil, de
	case err != nil:
		return nil, err
	}
	revs, err := interpreter.DecodeRevisionsWithType(v, typ)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return revs, nil
}

// perObject is the RunE of a command that runs one hook on each document of
// -f and prints the results in json, yaml or table form.
func perObject(s streams, f *objectFlags, run func(ctx context.Context, p *interpreter.Program, doc *object.Document) (result, error)) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		format, err := outputFormat(f.output, []string{formatJSON, formatYAML, formatTable}, defaultFormat(s.out))
		if err != nil {
			return err
		}
		return eachObject(cmd.Context(), s, f, format, run)
	}
}

// clusterResolver is --live's resolver: a cache of the cluster's objects of
// the kinds the documents' Kartas reference, synced; nil (every reference
// absent, with a warning) when none references anything.
func clusterResolver(ctx context.Context, s streams, f *objectFlags, res *resolver, objs *objects) (interpreter.Resolver, error) {
	c, err := newClusterClient(s, &f.config)
	if err != nil {
		return nil, clusterError(err)
	}
	var progs []*interpreter.Program
	for _, doc := range objs.items {
		// A document whose Karta cannot be had is reported when it runs.
		if p, err := res.program(asUnstructured(doc.Object).GroupVersionKind()); err == nil {
			progs = append(progs, p)
		}
	}
	rc, err := syncedReferences(ctx, c, progs...)
	if err != nil {
		return nil, clusterError(err)
	}
	return resolverOrNil(rc), nil
}
