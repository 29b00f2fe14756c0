// Package srcbound checks the size and nesting depth of untrusted source
// text — Lua chunks and jq expressions — with a cheap one-pass scanner,
// before gopher-lua's or gojq's parser, compiler or karta's tree walkers
// see it. Those recurse once per level of the syntax tree, so a text
// nested a million deep (a 2 MB chunk of unary minus signs or
// parentheses) costs them hundreds of MiB of Go stack or overflows it,
// which no recover can catch. The scanner counts on the high side: every
// text the real grammars nest deeper than the limit is refused, and a
// syntax error the scanner does not understand is left to the parser,
// which reaches it only through text the scanner has bounded.
package srcbound

import (
	"errors"
	"fmt"
	"strconv"
)

// The defaults (luaapi.Limits' MaxSourceSize and MaxNesting for Lua; jq
// expressions are checked with them when a Karta is loaded). Every
// built-in Karta, Karmada's and Argo CD's scripts stay far below them
// (TestRealSourcesWithinLimits); gopher-lua's compiler needs about 1.5 KiB
// of memory per level and gojq's checker about 1 KiB, and both take
// seconds at 100 000 levels.
const (
	DefaultMaxSourceSize = 1 << 20
	DefaultMaxNesting    = 200
)

// Kind names the static bound a source crossed.
type Kind string

const (
	KindSourceSize Kind = "source size"
	KindNesting    Kind = "nesting depth"
)

// LimitError is a source refused before parsing: larger than the size
// limit, or nested deeper than the nesting limit at Line.
type LimitError struct {
	// Name names the source: a Lua chunk's name ("karta:jobset/luaScript",
	// "script:fix.lua") or "jq expression".
	Name string
	Kind Kind
	// Line is the 1-based line where the depth crossed the limit (0 for
	// the size).
	Line int
	// Limit is the limit crossed; Size the source's size in bytes (for
	// KindSourceSize).
	Limit, Size int
}

func (e *LimitError) Error() string {
	prefix := ""
	if e.Name != "" {
		prefix = e.Name + ": "
	}
	if e.Kind == KindSourceSize {
		return fmt.Sprintf("%ssource size %d bytes exceeds the limit %d bytes", prefix, e.Size, e.Limit)
	}
	return prefix + "line " + strconv.Itoa(e.Line) + ": nesting depth exceeds the limit " + strconv.Itoa(e.Limit)
}

// errStop ends a scan early without an error: the text has a syntax error
// at this point (a closer that ends nothing open, a character no token
// starts with), which the parser reports having seen only bounded text.
var errStop = errors.New("stop")

func stopped(err error) error {
	if err == errStop {
		return nil
	}
	return err
}

// start is how every scanner starts: the size check (maxSize zero: the
// default; negative: none), then the depth bookkeeping.
func start(name, src string, maxSize, maxNesting int) (*depth, error) {
	if maxSize == 0 {
		maxSize = DefaultMaxSourceSize
	}
	if maxSize > 0 && len(src) > maxSize {
		return nil, &LimitError{Name: name, Kind: KindSourceSize, Limit: maxSize, Size: len(src)}
	}
	return newDepth(name, maxNesting), nil
}

// depth is the nesting bookkeeping both scanners share. Every open bracket
// or block pushes a frame whose base is the depth at which it opened;
// within a frame, chain counts the binary operators and suffixes (.x,
// [i], calls) of the current expression, each of which is one more level
// of the syntax tree, and unary the run of prefix operators not yet
// closed by an operand.
type depth struct {
	name   string
	max    int
	line   int
	frames []frame
	// top is the innermost frame (frames[len-1]), kept apart for speed.
	top frame
	// operand is true when the last token ended an operand, so that a
	// following "-" is binary and "(" or "[" is a suffix.
	operand bool
}

type frame struct {
	base, chain, unary int
	// low counts the lowest-precedence operators (jq's | and ,) of the
	// current expression: the operands between them do not nest in one
	// another, so chain restarts after each.
	low    int
	closer string
	// interpolation marks a string interpolation's \( ): after its
	// closing parenthesis the string goes on.
	interpolation bool
	// params marks a function's frame until its parameter list closes:
	// the body that follows starts a statement.
	params bool
}

func newDepth(name string, max int) *depth {
	if max <= 0 {
		max = DefaultMaxNesting
	}
	return &depth{name: name, max: max, line: 1}
}

func (d *depth) err() error {
	return &LimitError{Name: d.name, Kind: KindNesting, Line: d.line, Limit: d.max}
}

// chainWeight is how many binary operators or suffixes of one expression
// count as one level: a list of 300 elements or a sum of 300 terms is
// ordinary code, and at most chainWeight times the limit they nest the
// tree no deeper than a few hundred levels, which costs the parsers
// nothing.
const chainWeight = 4

// current is the depth of the next token.
func (d *depth) current() int {
	return d.top.base + (d.top.low+d.top.chain+chainWeight-1)/chainWeight + d.top.unary
}

// lowLink counts a lowest-precedence operator (jq's | and ,).
func (d *depth) lowLink() error {
	d.top.low++
	d.top.chain = -1 // link counts the operator itself
	return d.link()
}

// push opens a frame that the token closer ends.
func (d *depth) push(closer string) error {
	base := d.current() + 1
	if base > d.max {
		return d.err()
	}
	d.frames = append(d.frames, d.top)
	d.top = frame{base: base, closer: closer}
	d.operand = false
	return nil
}

// pop closes the innermost frame if closer ends it. ok is false for a
// closer that ends nothing open: a syntax error the parser reports at this
// point, having seen only text bounded so far.
func (d *depth) pop(closer string) (ok bool) {
	if len(d.frames) == 0 || d.top.closer != closer {
		return false
	}
	d.top = d.frames[len(d.frames)-1]
	d.frames = d.frames[:len(d.frames)-1]
	return true
}

// link counts a binary operator or a suffix of the current expression.
func (d *depth) link() error {
	d.top.chain++
	d.top.unary = 0
	d.operand = false
	if d.current() > d.max {
		return d.err()
	}
	return nil
}

// prefix counts a unary operator (or a keyword that nests what follows).
func (d *depth) prefix() error {
	d.top.unary++
	d.operand = false
	if d.current() > d.max {
		return d.err()
	}
	return nil
}

// boundary ends the current expression (a separator or a statement
// keyword): what follows starts at the frame's base.
func (d *depth) boundary() {
	d.top.chain, d.top.unary, d.top.low = 0, 0, 0
	d.operand = false
}

// endOperand records an operand (a name, literal or closed bracket).
func (d *depth) endOperand() {
	d.top.unary = 0
	d.operand = true
}
