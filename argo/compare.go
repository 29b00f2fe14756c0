package argo

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Action tests compare what an action returned with the expected output
// as Argo CD's harness (util/lua custom_actions_test.go) does: both go
// through the harness's normalizer, which masks the values an action
// writes from the clock (os.date) and a few fields Argo CD's test data
// leaves out, and then gitops-engine's two-way diff decides. That diff
// applies the expected object to the actual one as a JSON merge patch and
// reports a difference when the patch changes it: every field the
// expected object sets must be there with the same value (a null one must
// be absent), arrays compare whole, and fields only the actual object has
// do not count. (For built-in Kubernetes kinds gitops-engine merges arrays
// with the strategic merge patch instead; karta compares them whole.)

// masked is the harness's clock value for timestamps.
const masked = "0001-01-01T00:00:00Z"

// normalize applies Argo CD's test normalizer to a copy of obj.
func normalize(obj map[string]any) map[string]any {
	obj = jsonCopy(obj).(map[string]any)
	group, kind := groupKind(obj)
	set := func(v any, fields ...string) {
		m := obj
		for _, f := range fields[:len(fields)-1] {
			next, ok := m[f].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[f] = next
			}
			m = next
		}
		last := fields[len(fields)-1]
		if v == nil {
			delete(m, last)
			return
		}
		m[last] = v
	}
	fluxRequested := func() {
		set(map[string]any{"reconcile.fluxcd.io/requestedAt": "By Argo CD at: 0001-01-01T00:00:00"}, "metadata", "annotations")
	}
	switch group {
	case "batch":
		if kind == "Job" {
			if conds, ok := nested(obj, "status", "conditions").([]any); ok {
				for _, c := range conds {
					if m, ok := c.(map[string]any); ok && m["type"] == "FailureTarget" {
						m["lastTransitionTime"] = masked
					}
				}
			}
		}
	case "apps":
		switch kind {
		case "DaemonSet", "Deployment", "StatefulSet":
			set(map[string]any{"kubectl.kubernetes.io/restartedAt": masked}, "spec", "template", "metadata", "annotations")
		}
		if kind == "Deployment" {
			set(nil, "status")
			set(nil, "metadata", "creationTimestamp")
			set(nil, "metadata", "generation")
		}
	case "argoproj.io":
		switch kind {
		case "Rollout":
			set(nil, "spec", "restartAt")
		case "Workflow":
			set(nil, "metadata", "resourceVersion")
			set(nil, "metadata", "uid")
			set(nil, "metadata", "annotations", "workflows.argoproj.io/scheduled-time")
		}
	case "external-secrets.io":
		if kind == "ExternalSecret" || kind == "PushSecret" {
			set(map[string]any{"force-sync": masked}, "metadata", "annotations")
		}
	case "postgresql.cnpg.io":
		if kind == "Cluster" {
			ann, _ := nested(obj, "metadata", "annotations").(map[string]any)
			if ann == nil {
				ann = map[string]any{}
			}
			ann["cnpg.io/reloadedAt"] = masked
			ann["kubectl.kubernetes.io/restartedAt"] = masked
			set(ann, "metadata", "annotations")
			set(nil, "status", "targetPrimaryTimestamp")
		}
	case "helm.toolkit.fluxcd.io":
		if kind == "HelmRelease" {
			fluxRequested()
		}
	case "source.toolkit.fluxcd.io":
		switch kind {
		case "Bucket", "GitRepository", "HelmChart", "HelmRepository", "OCIRepository":
			fluxRequested()
		}
	case "image.toolkit.fluxcd.io":
		if kind == "ImageRepository" || kind == "ImageUpdateAutomation" {
			fluxRequested()
		}
	case "kustomize.toolkit.fluxcd.io":
		if kind == "Kustomization" {
			fluxRequested()
		}
	case "notification.toolkit.fluxcd.io":
		if kind == "Receiver" {
			fluxRequested()
		}
	}
	return obj
}

// nested is the value at fields, nil when absent.
func nested(obj map[string]any, fields ...string) any {
	var v any = obj
	for _, f := range fields {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[f]
	}
	return v
}

// jsonCopy is a deep copy of a JSON value with every number a float64, as
// a round trip through encoding/json makes it.
func jsonCopy(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return v
	}
	return out
}

// differences lists where applying want to got as a JSON merge patch
// changes got: "spec.replicas: expected 3, got 5". Empty means equal as
// Argo CD's harness sees it.
func differences(want, got map[string]any) []string {
	var out []string
	diffMerge(&out, nil, jsonCopy(want), jsonCopy(got))
	sort.Strings(out)
	return out
}

func diffMerge(out *[]string, at []any, want, got any) {
	wm, wok := want.(map[string]any)
	gm, gok := got.(map[string]any)
	if wok && gok {
		for k, w := range wm {
			g, present := gm[k]
			where := append(append([]any{}, at...), k)
			switch {
			case w == nil:
				if present {
					*out = append(*out, fmt.Sprintf("%s: expected absent, got %s", fieldPath(where), jsonText(g)))
				}
			case !present:
				*out = append(*out, fmt.Sprintf("%s: expected %s, got nothing", fieldPath(where), jsonText(w)))
			default:
				diffMerge(out, where, w, g)
			}
		}
		return
	}
	if wok {
		// A merge patch object over a non-object replaces it with the
		// patch's non-null members.
		*out = append(*out, fmt.Sprintf("%s: expected %s, got %s", fieldPath(at), jsonText(stripNulls(want)), jsonText(got)))
		return
	}
	// An array replaces got whole, with the nulls of the objects in it
	// pruned, as the merge patch library gitops-engine uses does
	// (evanphx/json-patch's pruneAryNulls): an expected
	// {conditions: null, from: in} matches an actual {from: in}.
	if want = stripNulls(want); jsonText(want) != jsonText(got) {
		*out = append(*out, fmt.Sprintf("%s: expected %s, got %s", fieldPath(at), jsonText(want), jsonText(got)))
	}
}

// stripNulls removes the null members of the objects in v, at any depth,
// through arrays too; null array elements stay (evanphx/json-patch's
// pruneNulls, which a merge patch applies to the values it sets).
func stripNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if e != nil {
				out[k] = stripNulls(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = stripNulls(e)
		}
		return out
	}
	return v
}

// fieldPath writes a location as the API server does: spec.items[0].name.
func fieldPath(at []any) string {
	if len(at) == 0 {
		return "(the object)"
	}
	var b strings.Builder
	for _, s := range at {
		if k, ok := s.(string); ok {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(k)
			continue
		}
		fmt.Fprintf(&b, "[%v]", s)
	}
	return b.String()
}

func jsonText(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
