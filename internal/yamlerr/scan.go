package yamlerr

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// CheckText rejects bytes that YAML does not allow before the YAML library
// sees them. The library's own errors for these ("invalid leading UTF-8
// octet", "control characters are not allowed") carry no position, so
// finding them here gives the user a byte offset and a line to look at.
func CheckText(data []byte) (msg string, line int, ok bool) {
	for off := 0; off < len(data); {
		r, size := utf8.DecodeRune(data[off:])
		switch {
		case r == utf8.RuneError && size <= 1:
			return fmt.Sprintf("input is not valid UTF-8 (byte offset %d); save the file as UTF-8", off), LineAt(data, off), false
		case r == 0:
			return fmt.Sprintf("input contains a NUL byte (byte offset %d); is it a binary file?", off), LineAt(data, off), false
		case !printable(r):
			return fmt.Sprintf("input contains the control character %U (byte offset %d), which YAML does not allow; remove it", r, off), LineAt(data, off), false
		}
		off += size
	}
	return "", 0, true
}

// printable is YAML 1.2's c-printable set, which is what the YAML library
// accepts (readerc.go).
func printable(r rune) bool {
	switch {
	case r == 0x09, r == 0x0A, r == 0x0D:
	case r >= 0x20 && r <= 0x7E:
	case r == 0x85:
	case r >= 0xA0 && r <= 0xD7FF:
	case r >= 0xE000 && r <= 0xFFFD:
	case r >= 0x10000 && r <= 0x10FFFF:
	default:
		return false
	}
	return true
}

// Empty reports whether a parsed document holds nothing: only comments
// and whitespace, as after a trailing "---". An explicit null is content.
func Empty(doc *yaml.Node) bool {
	if doc == nil || len(doc.Content) == 0 {
		return true
	}
	n := doc.Content[0]
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null" && n.Value == "" && n.Style == 0 && n.Anchor == ""
}

// Next parses the next document of a stream into a node tree, turning a
// panic of the YAML library into an error (it recovers its own errors;
// anything else that escapes is a bug in it). It returns io.EOF after the
// last document.
func Next(dec *yaml.Decoder) (doc *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &LibraryPanic{Value: r}
		}
	}()
	var n yaml.Node
	if err := dec.Decode(&n); err != nil {
		return nil, err
	}
	return &n, nil
}

// LibraryPanic is a panic of the YAML library, turned into an error.
type LibraryPanic struct{ Value any }

func (p *LibraryPanic) Error() string {
	return fmt.Sprintf("the YAML library failed on this input (%v); please report it", p.Value)
}

// Syntax describes an error of the YAML parser for the failing document
// (1-based, counted as Parse counts) of data: its line in data and
// "invalid YAML: " with the library's message.
func Syntax(data []byte, source string, document int, err error) *Error {
	var lp *LibraryPanic
	if errors.As(err, &lp) {
		return &Error{Source: source, Document: document, MultiDoc: document > 1 || SeparatorFrom(data, 2), Message: lp.Error(), Err: err}
	}
	line, msg := Split(err.Error())
	from := line
	if from == 0 {
		from = 2 // a separator on line 1 starts the first document
	}
	return &Error{Source: source, Line: line, Document: document, MultiDoc: document > 1 || SeparatorFrom(data, from),
		Message: "invalid YAML: " + msg, Err: err}
}

// Parse reads every document of data that holds something (see Empty),
// and reports the input's bytes YAML does not allow and the first syntax
// error as an *Error at its line. Readers built on another YAML library
// (sigs.k8s.io/yaml, as Kubernetes and Karmada read YAML) call it first,
// so that their syntax errors are reported as everyone's are.
func Parse(data []byte, source string) ([]*yaml.Node, error) {
	if msg, line, ok := CheckText(data); !ok {
		return nil, &Error{Source: source, Line: line, Message: msg}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for {
		doc, err := Next(dec)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, Syntax(data, source, len(docs)+1, err)
		}
		if !Empty(doc) {
			docs = append(docs, doc)
		}
	}
}
