package karta

import (
	"strconv"
	"strings"
)

// LoadError is one problem found while loading.
// +kubebuilder:object:generate=false
type LoadError struct {
	// Source is the file name ("<input>" when the caller gave none).
	Source string
	// Document is the 1-based number of the document, 0 when the problem is
	// not inside a document (e.g. the input is too large).
	Document int
	// MultiDoc is set when the input has (or, when the error stopped
	// reading, may have) more than one document.
	MultiDoc bool
	// Field is a JSON-style field path such as
	// spec.structureDefinition.childComponents[1].ownerRef, "" when none.
	Field string
	// Line is the 1-based line in the input, 0 when unknown.
	Line int
	// Message says what is wrong and, where it can, what to do.
	Message string

	// err is the underlying cause (e.g. an *fs.PathError), kept so that
	// errors.Is(err, fs.ErrNotExist) works through LoadErrors.
	err error
}

// Error renders the problem on one line, in the format of docs/cli.md:
// `SOURCE (document N): FIELD: MESSAGE (line L)`. The document part appears
// only in multi-document inputs, the field part only when there is a field
// and the line part only when the line is known.
func (e *LoadError) Error() string {
	var b strings.Builder
	b.WriteString(sourceName(e.Source))
	if e.MultiDoc && e.Document > 0 {
		b.WriteString(" (document ")
		b.WriteString(strconv.Itoa(e.Document))
		b.WriteString(")")
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	// A message may quote the user's text; keep the problem on one line.
	b.WriteString(lineBreaks.Replace(e.Message))
	if e.Line > 0 {
		b.WriteString(" (line ")
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap returns the underlying cause, if any.
func (e *LoadError) Unwrap() error { return e.err }

// LoadErrors is every problem of an input. Load returns it whenever
// anything is wrong.
// +kubebuilder:object:generate=false
type LoadErrors []*LoadError

// Error joins the problems with newlines, one problem per line.
func (es LoadErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap exposes each problem, so that errors.Is and errors.As see their
// causes.
func (es LoadErrors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// lineBreaks escapes line breaks, so that every problem prints as one
// line (docs/cli.md).
var lineBreaks = strings.NewReplacer("\r\n", `\r\n`, "\n", `\n`, "\r", `\r`)

// sourceName is the name used for an input in messages.
func sourceName(source string) string {
	if source == "" {
		return "<input>"
	}
	return source
}
