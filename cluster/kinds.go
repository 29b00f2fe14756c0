package cluster

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/interpreter"
)

// Kind is a workload kind the registry knows and the cluster serves: a
// Program with the resource its objects live in.
type Kind struct {
	Program *interpreter.Program
	Mapping *meta.RESTMapping
	// entry is the registry's entry, Program compiled from it once the
	// kind is picked.
	entry interpreter.Entry
	// Resource is discovery's description: plural, singular and short
	// names.
	Resource metav1.APIResource
}

// GVK is the kind's group, version and kind.
func (k *Kind) GVK() schema.GroupVersionKind { return k.Mapping.GroupVersionKind }

// Namespaced reports whether the kind's objects live in namespaces.
func (k *Kind) Namespaced() bool { return k.Mapping.Scope.Name() == meta.RESTScopeNameNamespace }

// names are the spellings KIND matches, in lower case: the kind, the
// plural and singular resource names, the short names, each also with
// ".group", and the Karta's name.
func (k *Kind) names() []string {
	gvk := k.GVK()
	base := []string{gvk.Kind, k.Mapping.Resource.Resource, k.Resource.SingularName}
	base = append(base, k.Resource.ShortNames...)
	var out []string
	for _, n := range base {
		if n == "" {
			continue
		}
		out = append(out, strings.ToLower(n))
		if gvk.Group != "" {
			out = append(out, strings.ToLower(n+"."+gvk.Group))
		}
	}
	return out
}

// NotServedError is a kind the registry knows that the cluster does not
// serve, named explicitly.
type NotServedError struct {
	Arg string
	GVK schema.GroupVersionKind
}

func (e *NotServedError) Error() string {
	return fmt.Sprintf("%s: the cluster does not serve %s (%s, Kind=%s); is its CRD installed?",
		e.Arg, strings.ToLower(e.GVK.Kind), e.GVK.GroupVersion(), e.GVK.Kind)
}

// UnknownKindError is a KIND that no Karta in the registry is for.
type UnknownKindError struct {
	Arg   string
	Known []string
}

func (e *UnknownKindError) Error() string {
	return fmt.Sprintf("%s: no Karta for this kind (known: %s)", e.Arg, strings.Join(e.Known, ", "))
}

// Kinds resolves the registry's Programs to the resources the cluster
// serves. Without arg it returns every served kind; kinds the cluster does
// not serve are skipped. With arg (KIND, matched case-insensitively against
// the kind, its plural, singular and short names, optionally with
// ".group", or a Karta's name) it returns the matching kinds, and a kind
// the cluster does not serve is a *NotServedError.
//
// A resource several Programs map to (one CRD serving MPIJob v1 and
// v2beta1) is listed once, through the version the cluster prefers, unless
// arg names a Karta, which picks its own version. A name several groups
// serve (jobs: batch's and Volcano's) means the group the cluster's
// RESTMapper ranks first, as in kubectl; the others are named with their
// group (jobs.batch.volcano.sh) or by their Karta's name.
func (c *Client) Kinds(reg *interpreter.Registry, arg string) ([]*Kind, error) {
	entries := reg.Entries()
	if arg != "" {
		for _, e := range entries {
			if e.Name != arg {
				continue
			}
			k, err := c.kind(e)
			if err != nil {
				return nil, c.notServed(arg, e.GVK, err)
			}
			return c.withPrograms(reg, []*Kind{k})
		}
	}
	want := strings.ToLower(arg)
	var out []*Kind
	var notServed []schema.GroupVersionKind
	for _, e := range entries {
		k, err := c.kind(e)
		if err != nil {
			if !meta.IsNoMatchError(err) {
				return nil, err
			}
			if arg != "" && matchesUnserved(e, want) {
				notServed = append(notServed, e.GVK)
			}
			continue
		}
		if arg == "" || contains(k.names(), want) {
			out = append(out, k)
		}
	}
	if arg != "" && len(out) == 0 {
		if len(notServed) > 0 {
			return nil, &NotServedError{Arg: arg, GVK: notServed[0]}
		}
		return nil, &UnknownKindError{Arg: arg, Known: knownKinds(entries)}
	}
	if arg != "" {
		out = c.firstGroup(out, want)
	}
	out, err := c.preferred(out)
	if err != nil {
		return nil, err
	}
	return c.withPrograms(reg, out)
}

// withPrograms compiles the Programs of the kinds picked, and only those:
// the registry's built-ins compile on first use.
func (c *Client) withPrograms(reg *interpreter.Registry, kinds []*Kind) ([]*Kind, error) {
	for _, k := range kinds {
		p, err := reg.Lookup(k.entry.GVK)
		if err != nil {
			return nil, err
		}
		if p == nil {
			return nil, fmt.Errorf("karta %q for %s left the registry", k.entry.Name, k.entry.GVK)
		}
		k.Program = p
	}
	return kinds, nil
}

// kind maps one registry entry's kind.
func (c *Client) kind(e interpreter.Entry) (*Kind, error) {
	gvk := e.GVK
	m, err := c.mapping(gvk)
	if err != nil {
		return nil, err
	}
	k := &Kind{entry: e, Mapping: m, Resource: metav1.APIResource{Name: m.Resource.Resource, Kind: gvk.Kind}}
	// Discovery is cached: the mapping above read it already.
	list, err := c.Discovery.ServerResourcesForGroupVersion(gvk.GroupVersion().String())
	if err != nil {
		return nil, c.reach(err)
	}
	for _, r := range list.APIResources {
		if r.Name == m.Resource.Resource {
			k.Resource = r
		}
	}
	return k, nil
}

func (c *Client) notServed(arg string, gvk schema.GroupVersionKind, err error) error {
	if meta.IsNoMatchError(err) {
		return &NotServedError{Arg: arg, GVK: gvk}
	}
	return err
}

// matchesUnserved is the KIND match for a kind the cluster does not
// serve: there is no discovery entry, so only the kind itself, its
// guessed plural and the Karta's name can match.
func matchesUnserved(e interpreter.Entry, want string) bool {
	gvk := e.GVK
	plural, singular := meta.UnsafeGuessKindToResource(gvk)
	for _, n := range []string{gvk.Kind, plural.Resource, singular.Resource, e.Name} {
		n = strings.ToLower(n)
		if n == want || (gvk.Group != "" && n+"."+strings.ToLower(gvk.Group) == want) {
			return true
		}
	}
	return false
}

// firstGroup keeps, of kinds matched by name from several groups, those
// of the group the RESTMapper resolves the name to: its priority order is
// kubectl's (the API server's own groups before the CRDs'). A name the
// mapper does not resolve (a short name, a Karta's name) keeps them all.
func (c *Client) firstGroup(kinds []*Kind, name string) []*Kind {
	groups := map[string]bool{}
	for _, k := range kinds {
		groups[k.GVK().Group] = true
	}
	if len(groups) < 2 {
		return kinds
	}
	gvr, err := c.Mapper.ResourceFor(schema.GroupVersionResource{Resource: name})
	if err != nil {
		return kinds
	}
	var out []*Kind
	for _, k := range kinds {
		if k.Mapping.Resource.GroupResource() == gvr.GroupResource() {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return kinds
	}
	return out
}

// preferred keeps one Kind per resource: the one of the version the
// cluster prefers, or else the first version in the cluster's order.
func (c *Client) preferred(kinds []*Kind) ([]*Kind, error) {
	byResource := map[schema.GroupResource][]*Kind{}
	var order []schema.GroupResource
	for _, k := range kinds {
		gr := k.Mapping.Resource.GroupResource()
		if _, seen := byResource[gr]; !seen {
			order = append(order, gr)
		}
		byResource[gr] = append(byResource[gr], k)
	}
	out := make([]*Kind, 0, len(order))
	for _, gr := range order {
		ks := byResource[gr]
		if len(ks) == 1 {
			out = append(out, ks[0])
			continue
		}
		ms, err := c.Mapper.RESTMappings(ks[0].GVK().GroupKind())
		if err != nil {
			return nil, c.reach(err)
		}
		out = append(out, pickVersion(ks, ms))
	}
	return out, nil
}

// pickVersion is the Kind whose version comes first in the cluster's
// order of versions (the preferred version first).
func pickVersion(ks []*Kind, ms []*meta.RESTMapping) *Kind {
	for _, m := range ms {
		for _, k := range ks {
			if k.GVK().Version == m.GroupVersionKind.Version {
				return k
			}
		}
	}
	return ks[0]
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// knownKinds lists the registry's kinds for UnknownKindError, sorted.
func knownKinds(entries []interpreter.Entry) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range entries {
		n := strings.ToLower(e.GVK.Kind)
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
