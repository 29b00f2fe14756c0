package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kartalua/karta/cluster"
)

// getPrinter prints get's workloads: a list at once, or, with -w, the
// initial list and then one row (one JSON line, one YAML document) per
// change.
type getPrinter struct {
	w io.Writer
	// warn reports, under a table, why a row is an Error: the table has
	// no column for it (-o json has: "error").
	warn          func(string)
	format        string
	allNamespaces bool
	// one is a get of a named object: JSON and YAML print the object, not
	// a list.
	one bool
	now time.Time
	// widths are the table's column widths, fixed by the initial list so
	// that the rows a watch adds line up under it.
	widths []int
	// rows counts the workloads printed.
	rows int
	// headerDone is set once a watch has printed the table's header.
	headerDone bool
}

// workloadList is get's -o json and -o yaml: kubectl's shape of a list.
type workloadList struct {
	Items []cluster.Workload `json:"items"`
}

// list prints the result of a get without -w.
func (p *getPrinter) list(ws []cluster.Workload) error {
	p.rows = len(ws)
	defer p.errors(ws...)
	var buf bytes.Buffer
	var err error
	switch {
	case p.format == formatTable:
		if len(ws) > 0 {
			err = table(&buf, p.tableRows(ws, true))
		}
	case p.one && len(ws) == 1:
		err = p.value(&buf, ws[0])
	default:
		err = p.value(&buf, workloadList{Items: ws})
	}
	if err != nil {
		return err
	}
	_, err = p.w.Write(buf.Bytes())
	return err
}

func (p *getPrinter) value(w io.Writer, v any) error {
	if p.format == formatYAML {
		return writeYAML(w, v)
	}
	return writeJSON(w, v)
}

// initial prints a watch's initial list: the table with its header (none
// at all when the list is empty, as kubectl), or one object per JSON line
// or YAML document.
func (p *getPrinter) initial(ws []cluster.Workload) error {
	if p.format != formatTable {
		for _, w := range ws {
			if err := p.changed(w); err != nil {
				return err
			}
		}
		return nil
	}
	rows := p.tableRows(ws, true)
	p.widths = make([]int, len(rows[0]))
	for _, r := range rows {
		p.fit(r)
	}
	if len(ws) == 0 {
		return nil
	}
	p.rows += len(ws)
	p.headerDone = true
	defer p.errors(ws...)
	return p.writeRows(rows)
}

// changed prints one row of a watch.
func (p *getPrinter) changed(w cluster.Workload) error {
	p.rows++
	var buf bytes.Buffer
	switch p.format {
	case formatTable:
		rows := p.tableRows([]cluster.Workload{w}, !p.headerDone)
		for _, r := range rows {
			p.fit(r)
		}
		p.headerDone = true
		defer p.errors(w)
		return p.writeRows(rows)
	case formatJSON:
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(w); err != nil {
			return err
		}
	case formatYAML:
		if p.rows > 1 {
			buf.WriteString("---\n")
		}
		if err := writeYAML(&buf, w); err != nil {
			return err
		}
	}
	_, err := p.w.Write(buf.Bytes())
	return err
}

// errors reports the rows of a table that are errors.
func (p *getPrinter) errors(ws ...cluster.Workload) {
	if p.format != formatTable {
		return
	}
	for _, w := range ws {
		if w.Error != "" {
			p.warn(fmt.Sprintf("%s %s: %s", strings.ToLower(w.Kind), path(w.Namespace, w.Name), w.Error))
		}
	}
}

// path is namespace/name, or name for a cluster-scoped object.
func path(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// fit widens the columns to a row.
func (p *getPrinter) fit(row []string) {
	for i, c := range row {
		if i < len(p.widths) && len(cell(c)) > p.widths[i] {
			p.widths[i] = len(cell(c))
		}
	}
}

// writeRows prints rows in the fixed columns, three spaces apart, as the
// tables of the other commands are.
func (p *getPrinter) writeRows(rows [][]string) error {
	var buf bytes.Buffer
	for _, row := range rows {
		var line strings.Builder
		for i, c := range row {
			c = cell(c)
			if i == len(row)-1 {
				line.WriteString(c)
				break
			}
			line.WriteString(c)
			line.WriteString(strings.Repeat(" ", p.widths[i]-len(c)+3))
		}
		buf.WriteString(strings.TrimRight(line.String(), " "))
		buf.WriteByte('\n')
	}
	_, err := p.w.Write(buf.Bytes())
	return err
}

// tableRows are the table's rows: NAMESPACE (with -A), NAME, KIND,
// STATUS, PODS, GANGS, AGE, the header first when asked for.
func (p *getPrinter) tableRows(ws []cluster.Workload, header bool) [][]string {
	var rows [][]string
	if header {
		rows = append(rows, p.withNamespace("NAMESPACE", []string{"NAME", "KIND", "STATUS", "PODS", "GANGS", "AGE"}))
	}
	for _, w := range ws {
		rows = append(rows, p.withNamespace(w.Namespace, []string{w.Name, w.Kind, w.Status, podsCell(w.Components), gangsCell(w.Groups), p.age(w)}))
	}
	return rows
}

func (p *getPrinter) withNamespace(ns string, row []string) []string {
	if !p.allNamespaces {
		return row
	}
	return append([]string{ns}, row...)
}

// podsCell is "master 1/1 worker 2/3": each component instance's existing
// and expected pods, ? for a count karta cannot know.
func podsCell(cs []cluster.Component) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		existing, expected := "?", "?"
		if c.Existing != nil {
			existing = strconv.Itoa(*c.Existing)
		}
		if c.Expected != nil {
			expected = strconv.FormatInt(*c.Expected, 10)
		}
		parts[i] = fmt.Sprintf("%s %s/%s", c.Label(), existing, expected)
	}
	return strings.Join(parts, " ")
}

// gangsCell is "2/4,3/3": each gang group's present pods and minMember.
func gangsCell(gs []cluster.GangGroup) string {
	parts := make([]string, len(gs))
	for i, g := range gs {
		parts[i] = fmt.Sprintf("%d/%d", g.Present, g.MinMember)
	}
	return strings.Join(parts, ",")
}

// age is kubectl's AGE.
func (p *getPrinter) age(w cluster.Workload) string {
	if w.CreationTimestamp.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(p.now.Sub(w.CreationTimestamp.Time))
}
