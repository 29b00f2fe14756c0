package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// The kinds a cluster stores Kartas as: the Karta CRD, and the legacy
// ResourceInterface when its CRD is installed.
var (
	KartaKind             = schema.GroupVersionKind{Group: "run.ai", Version: "v1alpha1", Kind: "Karta"}
	ResourceInterfaceKind = schema.GroupVersionKind{Group: "optimization.nvidia.com", Version: "v1alpha1", Kind: "ResourceInterface"}
)

// RegistryOptions configure Registry.
type RegistryOptions struct {
	// Base are the Programs the cluster's Kartas add to and replace; nil
	// compiles the built-ins (builtin.Registry with Interpreter). Base is
	// not modified.
	Base *interpreter.Registry
	// Interpreter compiles the cluster's Kartas (and the built-ins when
	// Base is nil).
	Interpreter interpreter.Options
	// Warn receives one line per cluster Karta that is skipped, and why;
	// nil drops them.
	Warn func(line string)
}

// Registry returns the Programs of every workload kind karta can
// interpret on this cluster: the built-ins, plus the Kartas stored in the
// cluster, each of which replaces the built-in for its kind. A cluster
// Karta that does not load, validate or compile is skipped with a warning.
// Of several that compile for one kind, the one the Karta controller picks
// wins (the oldest; on a tie Kartas before ResourceInterfaces, then by
// namespace and name) and the others are skipped with a warning. A cluster
// that serves neither Karta kind contributes nothing.
func (c *Client) Registry(ctx context.Context, opts RegistryOptions) (*interpreter.Registry, error) {
	base := opts.Base
	if base == nil {
		var err error
		if base, err = builtin.Registry(opts.Interpreter); err != nil {
			return nil, err
		}
	}
	// The built-ins stay lazy: a command that reads one kind compiles one.
	reg := base.Clone()
	warn := opts.Warn
	if warn == nil {
		warn = func(string) {}
	}
	var candidates []clusterKarta
	for order, gvk := range []schema.GroupVersionKind{KartaKind, ResourceInterfaceKind} {
		items, resource, err := c.listKartas(ctx, gvk)
		if apierrors.IsForbidden(err) {
			// Not allowed to read them: the built-ins still work.
			warn(fmt.Sprintf("%v; going on without the cluster's %s", err, gvk.Kind+"s"))
			continue
		}
		if err != nil {
			return nil, err
		}
		for i := range items {
			source := resource + "/" + items[i].GetName()
			if ns := items[i].GetNamespace(); ns != "" {
				source = resource + "/" + ns + "/" + items[i].GetName()
			}
			p, err := compileClusterKarta(&items[i], source, opts.Interpreter)
			if err != nil {
				warn(fmt.Sprintf("%s: skipped: %s", source, err))
				continue
			}
			candidates = append(candidates, clusterKarta{obj: &items[i], order: order, source: source, p: p})
		}
	}
	sort.SliceStable(candidates, func(i, j int) bool { return candidates[i].before(&candidates[j]) })
	claimed := map[schema.GroupVersionKind]string{}
	for _, k := range candidates {
		if prev, taken := claimed[k.p.GVK()]; taken {
			warn(fmt.Sprintf("%s: skipped: %s already describes %s (the oldest Karta of a kind wins)", k.source, prev, k.p.GVK()))
			continue
		}
		claimed[k.p.GVK()] = k.source
		reg.Put(k.p)
	}
	return reg, nil
}

// clusterKarta is a Karta of the cluster that compiled.
type clusterKarta struct {
	obj *unstructured.Unstructured
	// order is 0 for a Karta, 1 for a ResourceInterface.
	order  int
	source string
	p      *interpreter.Program
}

// before is the Karta controller's order of Kartas claiming one kind:
// oldest first; timestamps have a resolution of a second, so ties go to
// Kartas before ResourceInterfaces, then namespace, then name.
func (k *clusterKarta) before(o *clusterKarta) bool {
	a, b := k.obj.GetCreationTimestamp(), o.obj.GetCreationTimestamp()
	switch {
	case !a.Equal(&b):
		return a.Before(&b)
	case k.order != o.order:
		return k.order < o.order
	case k.obj.GetNamespace() != o.obj.GetNamespace():
		return k.obj.GetNamespace() < o.obj.GetNamespace()
	}
	return k.obj.GetName() < o.obj.GetName()
}

// listKartas lists the objects of one Karta kind, sorted by name, with the
// resource name that names them in messages. A kind the cluster does not
// serve lists nothing.
func (c *Client) listKartas(ctx context.Context, gvk schema.GroupVersionKind) ([]unstructured.Unstructured, string, error) {
	m, err := c.mapping(gvk)
	if meta.IsNoMatchError(err) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	list, err := c.resourceFor(m, metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, "", fmt.Errorf("listing %s: %w", m.Resource.GroupResource(), c.reach(err))
	}
	items := list.Items
	sort.Slice(items, func(i, j int) bool { return items[i].GetName() < items[j].GetName() })
	return items, m.Resource.Resource, nil
}

// compileClusterKarta loads, validates and compiles a Karta stored in the
// cluster, as karta validate and karta compile would the same object saved
// to a file: through YAML, so that a problem's line is the line of
// kubectl get -o yaml, which orders keys the same way.
func compileClusterKarta(obj *unstructured.Unstructured, source string, opts interpreter.Options) (*interpreter.Program, error) {
	data, err := yaml.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	ks, err := karta.Load(data, source)
	if err != nil {
		return nil, oneLineErrors(err, source)
	}
	if len(ks) != 1 { // one object is one document
		return nil, fmt.Errorf("holds %d Kartas, not one", len(ks))
	}
	if problems := karta.ValidateWithOptions(ks[0], interpreter.ValidateOptions()); problems.HasErrors() {
		var msgs []string
		for _, p := range problems.Errors() {
			msgs = append(msgs, p.String())
		}
		return nil, fmt.Errorf("%s", strings.Join(msgs, "; "))
	}
	p, err := interpreter.Compile(ks[0], opts)
	if err != nil {
		return nil, oneLineErrors(err, source)
	}
	return p, nil
}

// oneLineErrors joins an error's lines with "; ", without the source each
// load error starts with: the warning names it once.
func oneLineErrors(err error, source string) error {
	lines := strings.Split(strings.TrimRight(err.Error(), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, source+": ")
	}
	return fmt.Errorf("%s", strings.Join(lines, "; "))
}
