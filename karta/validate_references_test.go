package karta

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/jqexpr"
)

const fRefs = "spec.references"

func withRefs(refs ...Reference) func(t *testing.T, k *Karta) {
	return func(t *testing.T, k *Karta) { k.Spec.References = refs }
}

func lookupRef(name, expr string) Reference {
	return Reference{Name: name, Kind: GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
		Lookup: &ReferenceLookup{Name: expr}}
}

func TestValidateReferences(t *testing.T) {
	pods := Reference{Name: "pods", Kind: GroupVersionKind{Version: "v1", Kind: "Pod"},
		List: &ReferenceList{LabelSelector: `{matchLabels: {app: .metadata.name}}`, Owner: true}}
	runValidateCases(t, []validateCase{
		{
			name: "a lookup and a list, used in a matcher",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				withRefs(lookupRef("cfg", ".metadata.name"), pods)(t, k)
				gangOf(k).PodGroups[0].MinMemberPath = `($cfg.data.n // 0), ($pods | length)`
			},
		},
		{
			name:   "an expression reads an undeclared reference",
			base:   fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) { gangOf(k).PodGroups[0].MinMemberPath = `$cfg.data.id` },
			want: []wantProblem{
				errAt(fGroup0+".minMemberPath", "variable not defined: $cfg (a variable of a Karta's expression is a reference: declare it in spec.references)"),
			},
		},
		{
			name:   "names: empty, not an identifier, jq's own, duplicate",
			base:   fixturePyTorchJob,
			mutate: withRefs(lookupRef("", ".a"), lookupRef("my-ref", ".a"), lookupRef("ENV", ".a"), lookupRef("x", ".a"), lookupRef("x", ".b")),
			want: []wantProblem{
				errAt(fRefs+"[0].name", "required: the reference's name"),
				errAt(fRefs+"[1].name", `invalid value "my-ref": must be a jq identifier`),
				errAt(fRefs+"[2].name", `invalid value "ENV": $ENV is jq's own`),
				errAt(fRefs+"[4].name", `duplicate value "x"`),
			},
		},
		{
			name: "export fallbacks: constants only, no reference",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				ok, input, ref, bad := lookupRef("ok", ".a"), lookupRef("input", ".a"), lookupRef("ref", ".a"), lookupRef("bad", ".a")
				ok.ExportFallback = `{"data": {"n": 1}, "items": []}`
				input.ExportFallback = `{data: .spec}`
				ref.ExportFallback = `$ok`
				bad.ExportFallback = `{`
				withRefs(ok, input, ref, bad)(t, k)
			},
			want: []wantProblem{
				errAt(fRefs+"[1].exportFallback", `invalid value "{data: .spec}": must be a jq constant`),
				errAt(fRefs+"[2].exportFallback", "variable not defined: $ok (a reference's expressions run on the workload"),
				errAt(fRefs+"[3].exportFallback", "invalid jq"),
			},
		},
		{
			name:   "a reference's expression uses a reference",
			base:   fixturePyTorchJob,
			mutate: withRefs(lookupRef("a", "$b.metadata.name"), lookupRef("b", "$a.metadata.name")),
			want: []wantProblem{
				errAt(fRefs+"[0].lookup.name", "variable not defined: $b (a reference's expressions run on the workload before any reference is resolved"),
				errAt(fRefs+"[1].lookup.name", "variable not defined: $a"),
			},
		},
		{
			name: "shapes and scope",
			base: fixturePyTorchJob,
			mutate: withRefs(
				Reference{Name: "none", Kind: GroupVersionKind{Version: "v1", Kind: "Pod"}},
				Reference{Name: "both", Kind: GroupVersionKind{Version: "v1", Kind: "Pod"},
					Lookup: &ReferenceLookup{Name: ".a"}, List: &ReferenceList{Owner: true}},
				Reference{Name: "all", Kind: GroupVersionKind{Version: "v1", Kind: "Pod"}, List: &ReferenceList{}},
				Reference{Name: "cl", Kind: GroupVersionKind{Group: "g", Version: "v1", Kind: "C"}, Scope: ReferenceCluster,
					Lookup: &ReferenceLookup{Name: ".a", Namespace: ".b"}},
				Reference{Name: "owned", Kind: GroupVersionKind{Group: "g", Version: "v1", Kind: "C"}, Scope: ReferenceCluster,
					List: &ReferenceList{Owner: true}},
				Reference{Name: "bad", Scope: "Global", Lookup: &ReferenceLookup{Name: "del(.a)"}},
			),
			want: []wantProblem{
				errAt(fRefs+"[0]", "required: one of lookup and list"),
				errAt(fRefs+"[1].list", "forbidden: lookup is set"),
				errAt(fRefs+"[2].list", "required: labelSelector or owner"),
				errAt(fRefs+"[3].lookup.namespace", "forbidden: the kind is cluster-scoped"),
				errAt(fRefs+"[4].list.owner", "forbidden: a cluster-scoped object is never controlled"),
				errAt(fRefs+"[5].kind.version", "required"),
				errAt(fRefs+"[5].kind.kind", "required"),
				errAt(fRefs+"[5].scope", `unsupported value "Global"`),
				errAt(fRefs+"[5].lookup.name", "del"),
			},
		},
	})
}

func TestCheckedReferenceExprs(t *testing.T) {
	k := mustUnmarshalKarta(t, fixturePyTorchJob)
	k.Spec.References = []Reference{lookupRef("cfg", ".spec.cfg")}
	gangOf(k).PodGroups[0].MinMemberPath = `$cfg.data.id`
	c, err := Check(k, ValidateOptions{})
	require.NoError(t, err)
	ref := jqexpr.Of(c.ReferenceExpr(".spec.cfg"))
	require.NotNil(t, ref)
	assert.Empty(t, ref.Vars, "a reference's own expression binds no variable")
	assert.Equal(t, []string{"$cfg"}, jqexpr.Of(c.Expr(`$cfg.data.id`)).Vars)
	assert.Equal(t, []string{"$cfg"}, k.Spec.Variables())
}
