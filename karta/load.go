package karta

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/kartalua/karta/internal/yamlerr"
)

// The limits Load applies when LoadOptions leaves them zero.
const (
	// DefaultMaxBytes is the largest input Load accepts: 8 MiB, some
	// thousand times a real Karta.
	DefaultMaxBytes int64 = 8 << 20
	// DefaultMaxDepth is the deepest nesting of maps and lists Load
	// accepts. A Karta nests about a dozen levels.
	DefaultMaxDepth = 64
	// DefaultMaxValues bounds the values (maps, lists, keys, scalars) of
	// an input, counted by a scan before the YAML library builds its tree
	// (yamlerr.CountValues): 8 MB of empty objects once took 840 MiB and
	// 22 s. A built-in Karta holds about a thousand.
	DefaultMaxValues = 256 << 10
	// DefaultMaxDocuments bounds the documents of an input, counted before
	// any is decoded: each costs a few KiB to load and validate (100 000
	// took 500 MiB and 18 s). A file of every built-in Karta holds 37.
	DefaultMaxDocuments = 1000
)

// maxProblems caps the problems of one input. Past it Load stops reading,
// so that a huge broken input gives a readable answer.
const maxProblems = 1000

// LoadOptions bound what Load accepts. Zero values mean the defaults.
// +kubebuilder:object:generate=false
type LoadOptions struct {
	// MaxBytes is the largest input accepted (default DefaultMaxBytes). A
	// larger input is one clear error; LoadReader reads no further than
	// MaxBytes+1 bytes.
	MaxBytes int64
	// MaxDepth is the deepest nesting of maps and lists accepted (default
	// DefaultMaxDepth). Deeper is one clear error.
	MaxDepth int
	// MaxValues and MaxDocuments bound the values and documents of an
	// input (defaults DefaultMaxValues, DefaultMaxDocuments), checked
	// before any document is decoded.
	MaxValues, MaxDocuments int
}

func (o LoadOptions) withDefaults() LoadOptions {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.MaxValues <= 0 {
		o.MaxValues = DefaultMaxValues
	}
	if o.MaxDocuments <= 0 {
		o.MaxDocuments = DefaultMaxDocuments
	}
	return o
}

// Load decodes the Karta documents of a YAML or JSON input (JSON is YAML),
// one or many separated by "---". source names the input in errors ("" is
// shown as "<input>").
//
// Loading is strict: every document must be a Karta (run.ai/v1alpha1
// Karta, the legacy optimization.nvidia.com/v1alpha1 ResourceInterface, or
// a mix of the two), unknown fields and values of the wrong type are
// errors, and the top-level status is ignored. The CRD defaults of
// conditionsDefinition are applied. Empty documents are skipped.
//
// When anything is wrong, Load returns no Kartas and a LoadErrors holding
// every problem of every document it could read.
func Load(data []byte, source string) ([]*Karta, error) {
	return LoadWithOptions(data, source, LoadOptions{})
}

// LoadWithOptions is Load with limits other than the defaults.
func LoadWithOptions(data []byte, source string, opts LoadOptions) ([]*Karta, error) {
	l := &loader{source: sourceName(source), opts: opts.withDefaults(), data: data}
	kartas, errs := l.load()
	if len(errs) > 0 {
		return nil, errs
	}
	return kartas, nil
}

// LoadFile loads the Karta documents of a file. Unlike the CLI's -f, "-"
// is an ordinary file name here.
func LoadFile(path string) ([]*Karta, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, LoadErrors{readError(path, err)}
	}
	defer func() { _ = f.Close() }() // read-only: a close error changes nothing
	return LoadReader(f, path)
}

// LoadReader loads the Karta documents read from r. It reads at most
// DefaultMaxBytes+1 bytes, so that an endless or huge stream fails with a
// size error instead of exhausting memory.
func LoadReader(r io.Reader, source string) ([]*Karta, error) {
	return loadReader(r, source, LoadOptions{})
}

func loadReader(r io.Reader, source string, opts LoadOptions) ([]*Karta, error) {
	opts = opts.withDefaults()
	data, err := io.ReadAll(io.LimitReader(r, opts.MaxBytes+1))
	if err != nil {
		return nil, LoadErrors{readError(source, err)}
	}
	return LoadWithOptions(data, source, opts)
}

// readError describes a file or stream that could not be read. It keeps
// the cause, so errors.Is(err, fs.ErrNotExist) works.
func readError(source string, err error) *LoadError {
	cause := err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		cause = pe.Err // the path is already the source
	}
	return &LoadError{Source: sourceName(source), Message: fmt.Sprintf("cannot read: %v", cause), err: err}
}

// loader loads one input.
type loader struct {
	source string
	opts   LoadOptions
	data   []byte
}

// load reads every document. Problems of a document do not stop the
// following ones; a YAML syntax error does, because the parser cannot
// resynchronize after it.
func (l *loader) load() ([]*Karta, LoadErrors) {
	if int64(len(l.data)) > l.opts.MaxBytes {
		return nil, l.inputError(0, fmt.Sprintf(
			"the input is larger than %d bytes, the most a Karta file may be; is it the right file?", l.opts.MaxBytes))
	}
	if msg, line, ok := checkText(l.data); !ok {
		return nil, l.inputError(line, msg)
	}
	if n := yamlerr.CountValues(l.data); n > l.opts.MaxValues {
		return nil, l.inputError(0, fmt.Sprintf(
			"the input may hold %d values (maps, lists, keys and scalars), more than the %d a Karta file may; is it the right file?", n, l.opts.MaxValues))
	}
	if n := yamlerr.CountDocuments(l.data); n > l.opts.MaxDocuments {
		return nil, l.inputError(0, fmt.Sprintf(
			"the input holds %d documents, more than the %d a Karta file may", n, l.opts.MaxDocuments))
	}
	if isBlank(l.data) {
		// YAML rejects a tab at the start of a line even in an input that
		// holds nothing else; to the user it is empty.
		return nil, l.inputError(0, "no Karta document found (the input is empty)")
	}
	var (
		kartas   []*Karta
		errs     LoadErrors
		docs     int  // non-empty documents seen, the failing one included
		multiDoc bool // set when reading stopped and more may follow
	)
	dec := yaml.NewDecoder(bytes.NewReader(l.data))
	for {
		doc, err := nextDocument(dec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			docs++
			e := parseError(err, l.opts.MaxDepth)
			e.Document = docs
			errs = append(errs, e)
			// A separator on the failing line or after it may start
			// another document. Without a line, only a separator on line 1
			// is known not to (it starts the first document).
			from := e.Line
			if from == 0 {
				from = 2
			}
			multiDoc = separatorFrom(l.data, from)
			break
		}
		if isEmptyDocument(doc) {
			continue
		}
		docs++
		k, docErrs := l.loadDocument(doc)
		for _, e := range docErrs {
			e.Document = docs
		}
		errs = append(errs, docErrs...)
		if k != nil {
			kartas = append(kartas, k)
		}
		if len(errs) >= maxProblems {
			errs = append(errs, &LoadError{Document: docs, Message: fmt.Sprintf(
				"stopped after %d problems; fix these first", len(errs))})
			multiDoc = true
			break
		}
	}
	if docs == 0 {
		return nil, l.inputError(0, "no Karta document found (the input holds only comments or empty documents)")
	}
	for _, e := range errs {
		e.Source = l.source
		e.MultiDoc = docs > 1 || multiDoc
	}
	return kartas, errs
}

// inputError is a problem of the input as a whole, outside any document.
func (l *loader) inputError(line int, msg string) LoadErrors {
	return LoadErrors{{Source: l.source, Line: line, Message: msg}}
}

// isEmptyDocument reports whether a document has no content: only
// comments and whitespace, as after a trailing "---". An explicit null is
// content (and an error later).
func isEmptyDocument(doc *yaml.Node) bool {
	if len(doc.Content) == 0 {
		return true
	}
	n := doc.Content[0]
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null" && n.Value == "" && n.Style == 0 && n.Anchor == ""
}

// loadDocument checks and decodes one document.
func (l *loader) loadDocument(doc *yaml.Node) (*Karta, []*LoadError) {
	root := resolve(doc)
	// Depth first: a hostile input is better told it is too deep than
	// that it is, say, a list.
	if e := checkDepth(root, l.opts.MaxDepth); e != nil {
		return nil, []*LoadError{e}
	}
	if root == nil || root.Kind != yaml.MappingNode {
		line := doc.Line
		if root != nil {
			line = root.Line
		}
		return nil, []*LoadError{{Line: line, Message: fmt.Sprintf(
			"a Karta document must be a map with apiVersion, kind, metadata and spec; this one is %s", kindName(root))}}
	}
	if errs := checkNodes(root); len(errs) > 0 {
		return nil, errs
	}
	dropStatus(root)
	obj, errs := decodeGeneric(root)
	if len(errs) > 0 {
		return nil, errs
	}
	if errs := checkGVK(root, obj); len(errs) > 0 {
		return nil, errs
	}
	applyConditionsDefaults(obj)
	return decodeKarta(root, obj)
}

// dropStatus removes the top-level status from a document before it is
// decoded: Load ignores it, whatever it holds.
func dropStatus(root *yaml.Node) {
	kept := root.Content[:0:0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := resolve(root.Content[i]); k != nil && k.Kind == yaml.ScalarNode && k.ShortTag() == "!!str" && k.Value == "status" {
			continue
		}
		kept = append(kept, root.Content[i], root.Content[i+1])
	}
	root.Content = kept
}
