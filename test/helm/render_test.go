package helm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// The repository's root and the chart, relative to this package.
const (
	repoRoot  = "../.."
	chartPath = "../../charts/karta"
)

// kubeVersion is the Kubernetes version the chart is rendered for: the test
// cluster's (hack/testenv.sh).
var kubeVersion = chartutil.KubeVersion{Version: "v1.37.2", Major: "1", Minor: "37"}

// apiVersions are the optional APIs the chart's objects use, as a cluster
// with cert-manager and prometheus-operator reports them.
var apiVersions = chartutil.VersionSet{"cert-manager.io/v1", "monitoring.coreos.com/v1", "config.karmada.io/v1alpha1"}

func loadChart(t testing.TB) *chart.Chart {
	t.Helper()
	c, err := loader.Load(chartPath)
	require.NoError(t, err)
	return c
}

// render renders the chart as `helm template --release-name NAME
// --namespace NS -f values.yaml` would, and returns its objects in
// Helm's install order. A template's fail() is an error.
func render(t testing.TB, release, namespace, values string) ([]*unstructured.Unstructured, error) {
	t.Helper()
	vals := map[string]any{}
	require.NoError(t, yaml.Unmarshal([]byte(values), &vals))
	inst := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	inst.DryRun, inst.ClientOnly, inst.Replace = true, true, true
	inst.ReleaseName, inst.Namespace = release, namespace
	inst.KubeVersion, inst.APIVersions = &kubeVersion, apiVersions
	rel, err := inst.Run(loadChart(t), vals)
	if err != nil {
		return nil, err
	}
	_, manifests, err := releaseutil.SortManifests(releaseutil.SplitManifests(rel.Manifest), nil, releaseutil.InstallOrder)
	require.NoError(t, err)
	var objs []*unstructured.Unstructured
	for _, m := range manifests {
		dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(m.Content), 4096)
		for {
			obj := map[string]any{}
			if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, fmt.Errorf("%s: %w", m.Name, err)
			}
			if len(obj) > 0 {
				objs = append(objs, &unstructured.Unstructured{Object: obj})
			}
		}
	}
	return objs, nil
}

// mustRender is render that fails the test on an error.
func mustRender(t testing.TB, values string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := render(t, "karta", "karta-system", values)
	require.NoError(t, err)
	return objs
}

// find returns the one rendered object of kind and name ("" for any name).
func find(t testing.TB, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	var found []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind && (name == "" || o.GetName() == name) {
			found = append(found, o)
		}
	}
	require.Len(t, found, 1, "rendered %s %q: %s", kind, name, names(objs))
	return found[0]
}

// names lists the rendered objects as Kind/name.
func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

// readRepoFile reads a file of the repository.
func readRepoFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, path))
	require.NoError(t, err)
	return data
}

// toYAML prints objects for failure messages.
func toYAML(objs ...*unstructured.Unstructured) string {
	var b bytes.Buffer
	for _, o := range objs {
		data, _ := yaml.Marshal(o.Object)
		b.WriteString("---\n")
		b.Write(data)
	}
	return b.String()
}
