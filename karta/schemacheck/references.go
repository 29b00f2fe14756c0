package schemacheck

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/karta"
)

// ReferenceSchemas are the schemas lookup finds for the kinds k's
// references name, for Check: the CRDs of --crd, or those a cluster
// serves. A kind lookup has no schema for (a built-in kind such as
// ReplicaSet, a CRD not installed or not given), or fails to read, is
// left out: its references are values the check cannot tell.
func ReferenceSchemas(ctx context.Context, k *karta.Karta, lookup func(context.Context, schema.GroupVersionKind) (*Schema, error)) []*Schema {
	var out []*Schema
	seen := map[schema.GroupVersionKind]bool{}
	for _, r := range k.Spec.References {
		gvk := r.Kind.GVK()
		if seen[gvk] {
			continue
		}
		seen[gvk] = true
		if s, err := lookup(ctx, gvk); err == nil {
			out = append(out, s)
		}
	}
	return out
}
