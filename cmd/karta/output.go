package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	yaml "go.yaml.in/yaml/v3"
)

// The -o formats.
const (
	formatJSON  = "json"
	formatYAML  = "yaml"
	formatTable = "table"
	formatPatch = "patch" // revise only: the RFC 6902 patch
)

// outputFormat checks -o against the formats a command offers; left out,
// it is def.
func outputFormat(value string, offered []string, def string) (string, error) {
	if value == "" {
		return def, nil
	}
	for _, f := range offered {
		if value == f {
			return value, nil
		}
	}
	return "", usageError("-o %s: unknown output format (want %s)", value, strings.Join(offered, ", "))
}

// defaultFormat is table for a person at a terminal and JSON for a pipe or
// a file (docs/cli.md). golang.org/x/term is not a direct dependency; a
// character device is what a terminal looks like to Stat.
func defaultFormat(w io.Writer) string {
	if isTerminal(w) {
		return formatTable
	}
	return formatJSON
}

// objectFormat is the default of a command that prints an object, which
// has no table: YAML for a person at a terminal, JSON otherwise.
func objectFormat(w io.Writer) string {
	if isTerminal(w) {
		return formatYAML
	}
	return formatJSON
}

// isTerminal reports whether a stream is a terminal: a character device,
// as a terminal looks to Stat.
func isTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// writeResults prints one result per document: JSON values one after
// another (a JSON stream), YAML documents separated by ---, tables with a
// "==> FILE:LINE: document N: Kind namespace/name <==" heading when there
// are several.
func writeResults(w io.Writer, format string, results []result) error {
	var buf bytes.Buffer
	for i, r := range results {
		switch {
		case format == formatYAML && i > 0:
			buf.WriteString("---\n")
		case format == formatTable && (len(results) > 1 || r.headed):
			if i > 0 {
				buf.WriteByte('\n')
			}
			fmt.Fprintf(&buf, "==> %s: %s <==\n", r.where, r.object)
		}
		if err := render(&buf, format, r); err != nil {
			return &exitError{code: exitInvalid, msg: fmt.Sprintf("%s: cannot print the result: %v", r.where, err)}
		}
	}
	// Printed whole at the end: nothing reaches a pipe when a render
	// fails half way.
	if _, err := w.Write(buf.Bytes()); err != nil {
		return &exitError{code: exitInvalid, msg: fmt.Sprintf("cannot write the output: %v", err)}
	}
	return nil
}

// render prints one result in a format. A revised object renders from its
// tree; -o patch prints its value, the patch.
func render(w io.Writer, format string, r result) error {
	switch {
	case format == formatTable:
		return r.table(w)
	case format == formatYAML && r.doc != nil:
		return writeBytes(w, r.doc.YAML)
	case format == formatYAML && r.docs != nil:
		for i, d := range r.docs {
			if i > 0 {
				if _, err := io.WriteString(w, "---\n"); err != nil {
					return err
				}
			}
			if err := writeYAML(w, d); err != nil {
				return err
			}
		}
		return nil
	case format == formatYAML:
		return writeYAML(w, r.value)
	case format == formatJSON && r.doc != nil:
		return writeBytes(w, r.doc.JSON)
	}
	return writeJSON(w, r.value)
}

func writeBytes(w io.Writer, render func() ([]byte, error)) error {
	b, err := render()
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// writeJSON prints v indented by two spaces. Numbers copied from the object
// are json.Number and print with their spelling; map keys come sorted.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // messages and jq expressions keep their < > &
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeYAML prints v as YAML by way of its JSON, parsed as a YAML tree: a
// json.Number literal such as 1.0 stays 1.0 (sigs.k8s.io/yaml would print
// 1), and keys keep the JSON order.
func writeYAML(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil {
		return err
	}
	blockStyle(&n)
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return err
	}
	return enc.Close()
}

// blockStyle drops the flow and quoting styles the JSON text gave the
// tree, so that it prints as ordinary block YAML; the encoder still quotes
// a string that would otherwise read as another type ("true", "1").
func blockStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// table prints rows aligned in columns, the first row being the header.
func table(w io.Writer, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	for _, row := range rows {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = cell(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// section prints a titled table, or "TITLE: none" when it has no rows
// below its header.
func section(w io.Writer, title string, rows [][]string) error {
	if len(rows) <= 1 {
		_, err := fmt.Fprintf(w, "%s: none\n", title)
		return err
	}
	fmt.Fprintf(w, "%s:\n", title)
	return table(w, rows)
}

// cell keeps a value in its column: tabs and line breaks would break the
// alignment, and an empty cell would shift the eye to the next column.
func cell(s string) string {
	s = strings.NewReplacer("\t", " ", "\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	if s == "" {
		return "-"
	}
	return s
}

// orDash prints a nullable string.
func orDash(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}
