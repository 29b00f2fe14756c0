package helm

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kartalua/karta/exporter"
	"github.com/kartalua/karta/karta"
)

// The metrics exporter: the flag, and list and watch on the pods, every kind
// the built-ins name and the owners between them and their pods, and the
// extra kinds given.
func TestMetricsExporterRBAC(t *testing.T) {
	objs := mustRender(t, valueSets["metrics exporter, Grafana dashboard"])
	assert.Contains(t, deployment(t, objs).Spec.Template.Spec.Containers[0].Args, "--metrics-exporter")
	assert.NotContains(t, deployment(t, mustRender(t, "")).Spec.Template.Spec.Containers[0].Args, "--metrics-exporter")

	cr := &rbacv1.ClusterRole{}
	strictDecode(t, find(t, objs, "ClusterRole", "karta"), cr)
	base := append([]rbacv1.PolicyRule{
		{APIGroups: []string{"run.ai"}, Resources: []string{"kartas"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"run.ai"}, Resources: []string{"kartas/status"}, Verbs: []string{"update"}},
	}, referencedRules...)
	list := []string{"list", "watch"}
	want := append(append([]rbacv1.PolicyRule{}, base...), rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: list})
	want = append(want, exporterKindRules(t)...)
	want = append(want, rbacv1.PolicyRule{APIGroups: []string{"example.com"}, Resources: []string{"trainjobs"}, Verbs: list})
	assert.Equal(t, want, cr.Rules)
}

// exporterKindRules are list and watch on every kind a built-in names (its
// root and child components, its additional child kinds) and the
// exporter's default owner kinds.
func exporterKindRules(t *testing.T) []rbacv1.PolicyRule {
	return kindRules(t, func(*karta.Karta) bool { return true }, exporter.DefaultOwnerKinds())
}

// dashboard is the part of Grafana's dashboard model the structural check
// reads (https://grafana.com/docs/grafana/latest/dashboards/build-dashboards/view-dashboard-json-model/).
type dashboard struct {
	Title         string  `json:"title"`
	UID           string  `json:"uid"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []panel `json:"panels"`
	Templating    struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID      int    `json:"id"`
	Type    string `json:"type"`
	Title   string `json:"title"`
	GridPos *struct {
		X, Y, W, H int
	} `json:"gridPos"`
	Datasource struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

var seriesName = regexp.MustCompile(`\bkarta_[a-z_]+\b`)

// The Grafana dashboard: a ConfigMap the sidecar loads (its label), whose
// JSON is a dashboard with a namespace variable and the panels the issue
// asks for, every query naming only series docs/metrics.md documents and
// filtering on the namespace picked.
func TestGrafanaDashboard(t *testing.T) {
	assert.NotContains(t, names(mustRender(t, "")), "ConfigMap/karta-grafana-dashboard")
	objs := mustRender(t, valueSets["metrics exporter, Grafana dashboard"])
	cm := &corev1.ConfigMap{}
	strictDecode(t, find(t, objs, "ConfigMap", "karta-grafana-dashboard"), cm)
	assert.Equal(t, "1", cm.Labels["grafana_dashboard"])
	assert.Equal(t, "platform", cm.Labels["team"])
	assert.Equal(t, "Karta", cm.Annotations["grafana_folder"])
	assert.Equal(t, "monitoring", cm.Namespace)
	require.Len(t, cm.Data, 1)
	raw, ok := cm.Data["karta-workloads.json"]
	require.True(t, ok)
	assert.JSONEq(t, string(readRepoFile(t, "charts/karta/files/grafana-dashboard.json")), raw, "the file, whole")

	var d dashboard
	dec := json.NewDecoder(stringsReader(raw))
	require.NoError(t, dec.Decode(&d))
	assert.NotEmpty(t, d.Title)
	assert.NotEmpty(t, d.UID)
	assert.Positive(t, d.SchemaVersion)
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
	}
	assert.Equal(t, map[string]string{"datasource": "datasource", "namespace": "query"}, vars)

	documented := documentedSeries(t)
	ids := map[int]bool{}
	var titles []string
	for _, p := range d.Panels {
		titles = append(titles, p.Title)
		assert.False(t, ids[p.ID], "panel id %d is unique", p.ID)
		ids[p.ID] = true
		assert.NotEmpty(t, p.Type, p.Title)
		require.NotNil(t, p.GridPos, p.Title)
		assert.Positive(t, p.GridPos.W, p.Title)
		assert.LessOrEqual(t, p.GridPos.X+p.GridPos.W, 24, p.Title)
		assert.Equal(t, "${datasource}", p.Datasource.UID, p.Title)
		require.NotEmpty(t, p.Targets, p.Title)
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			assert.False(t, refs[tg.RefID], "%s: refId %s is unique", p.Title, tg.RefID)
			refs[tg.RefID] = true
			assert.Contains(t, tg.Expr, `namespace=~"$namespace"`, "%s: %s", p.Title, tg.Expr)
			series := seriesName.FindAllString(tg.Expr, -1)
			require.NotEmpty(t, series, "%s: %s", p.Title, tg.Expr)
			for _, s := range series {
				assert.Contains(t, documented, s, "%s: %s names a series docs/metrics.md does not document", p.Title, tg.Expr)
			}
		}
	}
	assert.Subset(t, titles, []string{"Workloads", "Status over time", "GPUs requested", "Gang completeness"})
}

// documentedSeries are the series of docs/metrics.md's table (the
// exporter's own test holds the table to what it registers).
func documentedSeries(t *testing.T) []string {
	t.Helper()
	row := regexp.MustCompile("(?m)^\\| `(karta_[a-z_]+)` \\|")
	var out []string
	for _, m := range row.FindAllStringSubmatch(string(readRepoFile(t, "docs/metrics.md")), -1) {
		out = append(out, m[1])
	}
	require.NotEmpty(t, out)
	return out
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
