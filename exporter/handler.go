package exporter

import (
	"bufio"
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// Handler serves /metrics: g's series (the process's own: the
// controller's, the exporter's health, the Go runtime's), then the
// workload series, written in Prometheus' text format straight from the
// summaries (gzipped when the scraper accepts it).
func (e *Exporter) Handler(g prometheus.Gatherer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mfs, err := g.Gather()
		if err != nil && len(mfs) == 0 {
			http.Error(w, "gathering metrics: "+err.Error(), http.StatusInternalServerError)
			return
		}
		format := expfmt.NewFormat(expfmt.TypeTextPlain)
		w.Header().Set("Content-Type", string(format))
		var out io.Writer = w
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			gz, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
			defer gz.Close()
			out = gz
		}
		bw := bufio.NewWriterSize(out, 64<<10)
		defer bw.Flush()
		enc := expfmt.NewEncoder(bw, format)
		for _, mf := range mfs {
			if err := enc.Encode(mf); err != nil {
				return // the client went away
			}
		}
		e.WriteText(bw)
	})
}

// WriteText writes the workload series in Prometheus' text format
// (version 0.0.4).
func (e *Exporter) WriteText(w *bufio.Writer) {
	all, now := e.snapshot()
	var line []byte
	for _, f := range families {
		w.WriteString("# HELP " + f.name + " " + escapeHelp(f.help) + "\n# TYPE " + f.name + " gauge\n")
		out := func(v float64, values ...string) {
			line = append(line[:0], f.name...)
			if len(values) > 0 {
				line = append(line, '{')
				for i, l := range f.labels {
					if i > 0 {
						line = append(line, ',')
					}
					line = append(line, l...)
					line = append(line, '=', '"')
					line = appendEscaped(line, values[i])
					line = append(line, '"')
				}
				line = append(line, '}')
			}
			line = append(line, ' ')
			line = appendFloat(line, v)
			line = append(line, '\n')
			w.Write(line)
		}
		if f.once != nil {
			f.once(all, out)
			continue
		}
		for _, s := range all {
			f.each(s, now, out)
		}
	}
}

// appendEscaped escapes a label value as the text format wants it.
func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b = append(b, '\\', '\\')
		case '"':
			b = append(b, '\\', '"')
		case '\n':
			b = append(b, '\\', 'n')
		default:
			b = append(b, c)
		}
	}
	return b
}

func escapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

// appendFloat writes a sample value as client_golang's text encoder does.
func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}
