package karmada

import (
	"context"
	"sort"

	lua "github.com/yuin/gopher-lua"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kartalua/karta/karmada/kube"
)

// GetDependencies runs InterpretDependency as Karmada's configurable
// interpreter does: every dependencyInterpretation script of the kind runs
// (in customization name order), each result must be a table that
// validates (VerifyDependencies), and the union is returned without
// duplicates, sorted by apiVersion, kind, namespace and name. The first
// failing script ends the operation.
func (in *Interpreter) GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]DependentObjectReference, error) {
	a, err := in.scriptsFor(obj, OpInterpretDependency)
	if err != nil {
		return nil, err
	}
	// Karmada collects into a set of the struct, whose LabelSelector is a
	// pointer: references with a selector are never duplicates.
	type key struct {
		apiVersion, kind, namespace, name string
		selector                          *metav1.LabelSelector
	}
	seen := map[key]bool{}
	out := []DependentObjectReference{}
	for _, s := range a.dependencies {
		var refs []DependentObjectReference
		err := in.call(ctx, s, 1, in.objectArgs(obj), func(L *lua.LState, res []lua.LValue) error {
			tb, ok := res[0].(*lua.LTable)
			if !ok {
				return &ResultError{Msg: "expect the returned requires type is table but got " + res[0].Type().String()}
			}
			if err := kube.Unmarshal(L, tb, &refs); err != nil {
				return err
			}
			if err := VerifyDependencies(refs); err != nil {
				return &ResultError{Msg: "invalid dependencies", Err: err}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		for _, r := range refs {
			k := key{r.APIVersion, r.Kind, r.Namespace, r.Name, r.LabelSelector}
			if !seen[k] {
				seen[k] = true
				out = append(out, r)
			}
		}
	}
	SortDependencies(out)
	return out, nil
}

// SortDependencies sorts references by apiVersion, kind, namespace, then
// name, as Karmada keeps them. References equal in all four (possible only
// with label selectors) keep their order.
func SortDependencies(deps []DependentObjectReference) {
	sort.SliceStable(deps, func(i, j int) bool {
		a, b := deps[i], deps[j]
		if a.APIVersion != b.APIVersion {
			return a.APIVersion < b.APIVersion
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
}

// VerifyDependencies is Karmada's validation of dependencies: each needs
// an apiVersion, a kind, and a name or a label selector; a selector must
// be valid (metav1 label selector rules). All problems are reported, as a
// field.ErrorList aggregate (paths dependencies[i].…).
func VerifyDependencies(deps []DependentObjectReference) error {
	var errs field.ErrorList
	root := field.NewPath("dependencies")
	for i, d := range deps {
		p := root.Index(i)
		if d.APIVersion == "" {
			errs = append(errs, field.Invalid(p.Child("apiVersion"), d.APIVersion, "missing required apiVersion"))
		}
		if d.Kind == "" {
			errs = append(errs, field.Invalid(p.Child("kind"), d.Kind, "missing required kind"))
		}
		if d.Name == "" && d.LabelSelector == nil {
			errs = append(errs, field.Invalid(p, deps[i], "dependency can not leave name and labelSelector all empty"))
		}
		errs = append(errs, metav1validation.ValidateLabelSelector(d.LabelSelector,
			metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: false}, p.Child("labelSelector"))...)
	}
	return errs.ToAggregate()
}
