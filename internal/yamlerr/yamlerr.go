// Package yamlerr owns where a problem in a YAML or JSON input is and how
// it is printed, for every reader of karta's inputs (Kartas, objects,
// pods, revisions, CRDs, customizations, test files):
//
//	FILE:LINE: message
//	FILE:LINE: document N: FIELD.PATH: message
//
// LINE is 1-based and left out when unknown; "document N" appears only in
// an input of several documents. The YAML library's own errors are
// translated here (Split) — its parser counts lines from 0, its scanner
// from 1 — so that the same syntax error has the same line whichever
// reader found it.
package yamlerr

import (
	"bytes"
	"strconv"
	"strings"
)

// Error is a problem at a place in an input.
type Error struct {
	// Source names the input: a file, or <stdin>.
	Source string
	// Line is 1-based, 0 when unknown.
	Line int
	// Document is the 1-based number of the document the problem is in,
	// counting documents that hold something, 0 when it is about the
	// input as a whole.
	Document int
	// MultiDoc is set when the input has (or, when the problem stopped
	// reading, may have) more than one document: only then is the
	// document named.
	MultiDoc bool
	// Field is the field path of the value at fault, "" when none.
	Field   string
	Message string
	// Err is the cause, if any.
	Err error
}

// Error renders the problem on one line (see Format).
func (e *Error) Error() string {
	doc := 0
	if e.MultiDoc {
		doc = e.Document
	}
	return Format(e.Source, e.Line, doc, e.Field, e.Message)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Where renders a position: "SOURCE", "SOURCE:LINE", and ": document N"
// after it when document is not 0. An empty source is "<input>".
func Where(source string, line, document int) string {
	var b strings.Builder
	if source == "" {
		source = "<input>"
	}
	b.WriteString(source)
	if line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(line))
	}
	if document > 0 {
		b.WriteString(": document ")
		b.WriteString(strconv.Itoa(document))
	}
	return b.String()
}

// Format renders a problem: Where, then the field path when there is one,
// then the message with its line breaks escaped, so that every problem is
// one line.
func Format(source string, line, document int, field, msg string) string {
	var b strings.Builder
	b.WriteString(Where(source, line, document))
	b.WriteString(": ")
	if field != "" {
		b.WriteString(field)
		b.WriteString(": ")
	}
	b.WriteString(lineBreaks.Replace(msg))
	return b.String()
}

var lineBreaks = strings.NewReplacer("\r\n", `\r\n`, "\n", `\n`, "\r", `\r`)

// parserProblems are the messages of the YAML library's parser, as opposed
// to its scanner (parserc.go). For these the library reports the 0-based
// line of the construct being parsed, and no line at all when that is 0
// (its fail adds 1 for scanner errors only).
var parserProblems = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found undefined tag handle":             true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found duplicate %TAG directive":         true,
}

// Split takes an error text of the YAML library (go.yaml.in/yaml/v3, or
// sigs.k8s.io/yaml's, which wraps the same texts) apart into the 1-based
// line it names (0 when none) and the message without the library's
// prefixes.
func Split(text string) (line int, msg string) {
	text = strings.TrimPrefix(text, "error converting YAML to JSON: ")
	text = strings.TrimPrefix(text, "yaml: ")
	line, msg = 0, text
	if rest, ok := strings.CutPrefix(text, "line "); ok {
		if i := strings.Index(rest, ": "); i > 0 {
			if n, err := strconv.Atoi(rest[:i]); err == nil {
				line, msg = n, rest[i+2:]
			}
		}
	}
	if parserProblems[msg] {
		line++ // from the parser's 0-based line to the user's 1-based one
	}
	return line, msg
}

// LineAt returns the 1-based line of a byte offset.
func LineAt(data []byte, off int) int {
	return bytes.Count(data[:min(off, len(data))], []byte("\n")) + 1
}

// SeparatorFrom reports whether a document separator (a line starting
// with "---" followed by a blank or the end of the line) is on the given
// 1-based line or after it. It lets an error that stopped reading say
// whether the input may hold more documents.
func SeparatorFrom(data []byte, line int) bool {
	n := 1
	for len(data) > 0 {
		end := bytes.IndexByte(data, '\n')
		cur := data
		if end >= 0 {
			cur, data = data[:end], data[end+1:]
		} else {
			data = nil
		}
		if n >= line && isSeparator(cur) {
			return true
		}
		n++
	}
	return false
}

func isSeparator(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	rest := line[3:]
	return len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\r'
}

// Plain drops the wrapping sigs.k8s.io/yaml and encoding/json put around
// a decoding error ("error unmarshaling JSON: while decoding JSON: json:
// "), which says twice that YAML went through JSON and tells the reader
// nothing.
func Plain(msg string) string {
	for _, p := range []string{"error converting YAML to JSON: ", "error unmarshaling JSON: ", "while decoding JSON: ", "json: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return msg
}
