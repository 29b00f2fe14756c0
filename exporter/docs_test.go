package exporter

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// describing is a Registerer that records the series of what is
// registered with it.
type describing struct{ names map[string]bool }

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (d *describing) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc, 100)
	go func() { c.Describe(ch); close(ch) }()
	for desc := range ch {
		if m := fqName.FindStringSubmatch(desc.String()); m != nil {
			d.names[m[1]] = true
		}
	}
	return nil
}
func (d *describing) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = d.Register(c)
	}
}
func (d *describing) Unregister(prometheus.Collector) bool { return true }

// TestDocumentedSeries holds docs/metrics.md's table to the series the
// exporter registers and writes, both ways (the watches' karta_watch_* are
// documented in docs/controller.md).
func TestDocumentedSeries(t *testing.T) {
	e := newEnv(t)
	reg := &describing{names: map[string]bool{}}
	_, err := New(e.dyn, e.meta, e.mapper, e.reg, Options{Registerer: reg})
	require.NoError(t, err)
	for _, f := range families {
		reg.names[f.name] = true
	}
	var registered []string
	for n := range reg.names {
		if !strings.HasPrefix(n, "karta_watch_") {
			registered = append(registered, n)
		}
	}
	sort.Strings(registered)
	require.Equal(t, registered, documentedSeries(t))
}

// documentedSeries are the series of docs/metrics.md's table.
func documentedSeries(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../docs/metrics.md")
	require.NoError(t, err)
	row := regexp.MustCompile("(?m)^\\| `(karta_[a-z_]+)` \\|")
	var out []string
	for _, m := range row.FindAllStringSubmatch(string(data), -1) {
		out = append(out, m[1])
	}
	sort.Strings(out)
	return out
}
