package kindwatch

import (
	"log/slog"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Kind is a kind mapped to its resource.
type Kind struct {
	GVK        schema.GroupVersionKind
	GVR        schema.GroupVersionResource
	Namespaced bool
}

// Pods is core v1 pods, which every consumer watches whole.
var Pods = Kind{
	GVK:        schema.GroupVersionKind{Version: "v1", Kind: "Pod"},
	GVR:        schema.GroupVersionResource{Version: "v1", Resource: "pods"},
	Namespaced: true,
}

// Map maps gvk to its resource with mapper; false when the cluster does
// not serve it, or discovery failed, which is logged.
func Map(mapper meta.RESTMapper, log *slog.Logger, gvk schema.GroupVersionKind) (Kind, bool) {
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		if !meta.IsNoMatchError(err) {
			log.Warn("cannot map a kind", "kind", gvk.String(), "err", err)
		}
		return Kind{}, false
	}
	return Kind{GVK: gvk, GVR: m.Resource, Namespaced: m.Scope.Name() == meta.RESTScopeNameNamespace}, true
}

// Owners maps the owner kinds (the Kartas' child kinds, a consumer's
// defaults) that are neither roots nor pods, the first version of each
// group and kind, as far as the cluster serves them.
func Owners(mapper meta.RESTMapper, log *slog.Logger, roots map[schema.GroupKind]Kind, kinds []schema.GroupVersionKind) map[schema.GroupKind]Kind {
	owners := map[schema.GroupKind]Kind{}
	for _, gvk := range kinds {
		gk := gvk.GroupKind()
		if _, isRoot := roots[gk]; isRoot || gk == Pods.GVK.GroupKind() {
			continue
		}
		if _, done := owners[gk]; done {
			continue
		}
		if k, ok := Map(mapper, log, gvk); ok {
			owners[gk] = k
		}
	}
	return owners
}

// ResetMapper makes mapper ask discovery afresh, when it can.
func ResetMapper(mapper meta.RESTMapper) {
	if r, ok := mapper.(meta.ResettableRESTMapper); ok {
		r.Reset()
	}
}

func sortedKinds(m map[schema.GroupKind]Kind) []schema.GroupKind {
	out := make([]schema.GroupKind, 0, len(m))
	for gk := range m {
		out = append(out, gk)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// ByOwner lists w's cached objects whose controller has uid (none when w
// is nil).
func ByOwner(w *Watch, uid types.UID) []any {
	if w == nil {
		return nil
	}
	return w.ByIndex(OwnerIndex, string(uid))
}
