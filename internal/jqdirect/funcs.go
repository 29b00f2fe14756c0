package jqdirect

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kartalua/karta/internal/jqlua"
	"github.com/kartalua/karta/internal/jqvalue"
	"github.com/kartalua/karta/internal/third_party/gojq"
)

// The builtins of the direct subset, as gojq defines them (func.go,
// builtin.jq). Each takes its input (and an argument's output) and gives
// one value, or declines where gojq fails or where the exact result is
// not certain. They are written here rather than calling the fork's:
// those are unexported, take gojq's values (int, *big.Int, its own
// conversions of the object) and report errors, where these read the
// object's values in place, compute numbers as the generated Lua does and
// decline; TestAgreesWithGojq and FuzzAgreesWithGojq hold them to gojq.

// funcNode is a builtin of no arguments applied to the input.
type funcNode struct {
	fn func(c *dctx, v any) (any, bool)
	// ofArray is fn on an array input, for the builtins that read its
	// elements and keep none of the array itself (arrayFnNode).
	ofArray func(c *dctx, xs []any) (any, bool)
}

// arrayFnNode is `[q] | f` for a builtin f with ofArray: the array is
// gathered in a scratch buffer and never built. It is how Kartas count
// and compare (`[.status.conditions[]? | select(…)] | length` is a
// status matcher's usual test), and building the array cost two of an
// InterpretStatus call's six allocations. Steps and declines are the
// pipe's: the array's elements as arrayNode converts them, one step for
// the pipe's one input, then f's own.
type arrayFnNode struct {
	q  dnode
	fn func(c *dctx, xs []any) (any, bool)
}

// arrayInto returns `l | r` as an arrayFnNode when l builds an array
// that r only reads, else nil.
func arrayInto(l, r dnode) dnode {
	a, ok := l.(*arrayNode)
	f, isFunc := r.(funcNode)
	if !ok || a.q == nil || !isFunc || f.ofArray == nil {
		return nil
	}
	return &arrayFnNode{q: a.q, fn: f.ofArray}
}

func (n *arrayFnNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	tmp := c.buf()
	defer func() { c.free(tmp) }()
	tmp, ok := n.q.eval(c, in, tmp)
	if !ok || len(tmp) > jqlua.OutputLimit {
		return out, false
	}
	for i, v := range tmp {
		if tmp[i], ok = outValue(v); !ok {
			return out, false
		}
	}
	if !c.step(1) {
		return out, false
	}
	v, ok := n.fn(c, tmp)
	if !ok {
		return out, false
	}
	return append(out, v), true
}

func (n funcNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	v, ok := n.fn(c, in)
	if !ok {
		return out, false
	}
	return append(out, v), true
}

// func1Node is a builtin of one argument: the argument is evaluated on the
// input, and the builtin applied to the input and each of its outputs.
type func1Node struct {
	fn  func(c *dctx, v, x any) (any, bool)
	arg dnode
}

func (n *func1Node) eval(c *dctx, in any, out []any) ([]any, bool) {
	tmp := c.buf()
	defer func() { c.free(tmp) }()
	tmp, ok := n.arg.eval(c, in, tmp)
	if !ok || !c.step(len(tmp)) {
		return out, false
	}
	for _, x := range tmp {
		v, ok := n.fn(c, in, x)
		if !ok {
			return out, false
		}
		out = append(out, v)
	}
	return out, true
}

func fnLength(_ *dctx, v any) (any, bool) {
	switch x := v.(type) {
	case nil:
		return boxFloat(0), true
	case bool:
		return nil, false
	case string:
		if !utf8.ValidString(x) {
			return nil, false
		}
		return boxFloat(float64(utf8.RuneCountInString(x))), true
	case []any:
		return lengthOf(nil, x)
	case map[string]any:
		return boxFloat(float64(len(x))), true
	}
	f, ok := dnumber(v)
	if !ok {
		return nil, false
	}
	return boxFloat(math.Abs(f)), true
}

func lengthOf(_ *dctx, xs []any) (any, bool) { return boxFloat(float64(len(xs))), true }

func fnNot(_ *dctx, v any) (any, bool) {
	if _, ok := rank(v); !ok {
		return nil, false
	}
	return !truthy(v), true
}

func fnType(_ *dctx, v any) (any, bool) {
	r, ok := rank(v)
	if !ok {
		return nil, false
	}
	return typeNames[r], true
}

// typeNames are the names `type` gives, by rank, boxed once: a string
// picked from an array and returned as an any was an allocation per call
// (twelve in KServe's storage-initializer view, `type == "object"` …).
var typeNames = [...]any{"null", "boolean", "boolean", "number", "string", "array", "object"}

func fnToString(_ *dctx, v any) (any, bool) {
	switch v.(type) {
	case string:
		// The input itself: boxing the string again was an allocation
		// per interpolated label.
		return v, true
	case []any, map[string]any:
		// A composite may share subtrees and print as many copies: the
		// Lua path serialises it under the call's limits.
		return nil, false
	}
	// From ±2^53 on, the number in flight may be a rounded integer, which
	// gojq prints exactly: the Lua path decides.
	// -0 (a float product or quotient) prints as "-0" in gojq, which
	// outValue would make 0.
	if f, ok := dnumber(v); ok && (math.Abs(f) >= maxExactFloat || f == 0 && math.Signbit(f)) {
		return nil, false
	}
	g, ok := outValue(v)
	if !ok {
		return nil, false
	}
	if i, ok := g.(int64); ok {
		// An integer within ±2^53 prints as gojq prints it, without
		// its encoder (Spark's memory in Mi, a view's counts).
		return strconv.FormatInt(i, 10), true
	}
	s, err := jqvalue.ToString(g)
	if err != nil {
		return nil, false
	}
	return s, true
}

// fnKeys is keys: an object's keys sorted, or an array's indexes.
func fnKeys(c *dctx, v any) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		if !c.step(len(x)+1) || !c.alloc(arrayBytes(len(x))) {
			return nil, false
		}
		keys := sortedKeys(x)
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = k
		}
		return out, true
	case []any:
		if !c.step(len(x)+1) || !c.alloc(arrayBytes(len(x))) {
			return nil, false
		}
		out := make([]any, len(x))
		for i := range x {
			out[i] = int64(i)
		}
		return out, true
	}
	return nil, false
}

// elements are the values .[] gives: an array's in order, an object's by
// sorted key (charged); ok false for anything else, which jq cannot
// iterate.
func elements(c *dctx, v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return arrayElements(c, x)
	case map[string]any:
		if !c.step(len(x)+1) || !c.alloc(arrayBytes(len(x))) {
			return nil, false
		}
		vs := make([]any, 0, len(x))
		for _, k := range sortedKeys(x) {
			vs = append(vs, x[k])
		}
		return vs, true
	}
	return nil, false
}

// arrayElements is elements of an array: its own elements, charged as
// every walk over them is.
func arrayElements(c *dctx, xs []any) ([]any, bool) { return xs, c.step(len(xs) + 1) }

// fnMin and fnMax are gojq's min and max: null for an empty array, else
// the first least (last greatest) element in jq's order.
func fnMin(c *dctx, v any) (any, bool) { return minMax(c, v, true) }

func fnMax(c *dctx, v any) (any, bool) { return minMax(c, v, false) }

func minOf(c *dctx, xs []any) (any, bool) { return minMaxOf(c, xs, true) }

func maxOf(c *dctx, xs []any) (any, bool) { return minMaxOf(c, xs, false) }

func minMax(c *dctx, v any, isMin bool) (any, bool) {
	xs, ok := v.([]any)
	if !ok {
		return nil, false
	}
	return minMaxOf(c, xs, isMin)
}

func minMaxOf(c *dctx, xs []any, isMin bool) (any, bool) {
	if !c.step(len(xs) + 1) {
		return nil, false
	}
	if len(xs) == 0 {
		return nil, true
	}
	x := xs[0]
	for _, y := range xs[1:] {
		cmp, ok := compare(c, x, y)
		if !ok {
			return nil, false
		}
		if cmp > 0 == isMin {
			x = y
		}
	}
	return x, true
}

// fnAdd is add: the elements summed with + from null (null elements add
// nothing).
func fnAdd(c *dctx, v any) (any, bool) {
	xs, ok := elements(c, v)
	if !ok {
		return nil, false
	}
	return sum(c, xs)
}

func addOf(c *dctx, xs []any) (any, bool) {
	if _, ok := arrayElements(c, xs); !ok {
		return nil, false
	}
	return sum(c, xs)
}

func sum(c *dctx, xs []any) (any, bool) {
	var acc any
	var ok bool
	for _, x := range xs {
		if x == nil {
			continue
		}
		if acc, ok = binary(c, gojq.OpAdd, acc, x); !ok {
			return nil, false
		}
	}
	return acc, true
}

// fnAny and fnAll are any and all: whether some (every) element is
// truthy.
func fnAny(c *dctx, v any) (any, bool) { return anyAll(c, v, true) }

func fnAll(c *dctx, v any) (any, bool) { return anyAll(c, v, false) }

func anyOf(c *dctx, xs []any) (any, bool) { return anyAllOf(c, xs, true) }

func allOf(c *dctx, xs []any) (any, bool) { return anyAllOf(c, xs, false) }

func anyAll(c *dctx, v any, isAny bool) (any, bool) {
	xs, ok := elements(c, v)
	if !ok {
		return nil, false
	}
	return truthOf(xs, isAny)
}

func anyAllOf(c *dctx, xs []any, isAny bool) (any, bool) {
	if _, ok := arrayElements(c, xs); !ok {
		return nil, false
	}
	return truthOf(xs, isAny)
}

func truthOf(xs []any, isAny bool) (any, bool) {
	for _, x := range xs {
		if _, ok := rank(x); !ok {
			return nil, false
		}
		if truthy(x) == isAny {
			return isAny, true
		}
	}
	return !isAny, true
}

// anyAllNode is any(f) and all(f): f on each element in turn, until an
// output decides (a truthy one for any, a falsy one for all); later
// elements are not evaluated, as in jq.
type anyAllNode struct {
	f     dnode
	isAny bool
}

func (n *anyAllNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	xs, ok := elements(c, in)
	if !ok {
		return out, false
	}
	return decideAnyAll(c, n.f, xs, n.isAny, out)
}

// decideAnyAll appends any's (isAny) or all's result of f over xs: f on
// each in turn, until an output decides.
func decideAnyAll(c *dctx, f dnode, xs []any, isAny bool, out []any) ([]any, bool) {
	for _, x := range xs {
		tmp := c.buf()
		tmp, ok := f.eval(c, x, tmp)
		decided := false
		for _, y := range tmp {
			if truthy(y) == isAny {
				decided = true
				break
			}
		}
		c.free(tmp)
		if !ok {
			return out, false
		}
		if decided {
			return append(out, isAny), true
		}
	}
	return append(out, !isAny), true
}

// errorNode is error(f): an error for each output of f, which the Lua
// path reports; no output when f has none.
type errorNode struct{ f dnode }

func (n *errorNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	tmp := c.buf()
	defer func() { c.free(tmp) }()
	tmp, ok := n.f.eval(c, in, tmp)
	return out, ok && len(tmp) == 0
}

// declineNode is a builtin that always fails (error/0): the Lua path
// reports its error.
type declineNode struct{}

func (declineNode) eval(_ *dctx, _ any, out []any) ([]any, bool) { return out, false }

// strings2 is the input and the argument when both are strings, which
// the string builtins of one argument require.
func strings2(v, x any) (string, string, bool) {
	s, ok := v.(string)
	if !ok {
		return "", "", false
	}
	t, ok := x.(string)
	return s, t, ok
}

func fnStartsWith(_ *dctx, v, x any) (any, bool) {
	s, t, ok := strings2(v, x)
	return ok && strings.HasPrefix(s, t), ok
}

func fnEndsWith(_ *dctx, v, x any) (any, bool) {
	s, t, ok := strings2(v, x)
	return ok && strings.HasSuffix(s, t), ok
}

func fnLtrimstr(_ *dctx, v, x any) (any, bool) {
	s, t, ok := strings2(v, x)
	if !ok {
		return nil, false
	}
	return trimmed(v, s, strings.TrimPrefix(s, t)), true
}

func fnRtrimstr(_ *dctx, v, x any) (any, bool) {
	s, t, ok := strings2(v, x)
	if !ok {
		return nil, false
	}
	return trimmed(v, s, strings.TrimSuffix(s, t)), true
}

// trimmed is the result of trimming s (v boxed): v itself when nothing
// was trimmed, else t as boxString boxes it.
func trimmed(v any, s, t string) any {
	if len(t) == len(s) {
		return v
	}
	return boxString(t)
}

// boxString returns s as an any without allocating for the empty string
// and one ASCII character (Spark's "8g"[:-1], AppWrapper's index "0]"
// trimmed): the cases the runtime would box afresh.
func boxString(s string) any {
	if len(s) == 1 && s[0] < utf8.RuneSelf {
		return asciiStrings[s[0]]
	}
	return s
}

// asciiStrings holds the one-character ASCII strings boxed, as
// smallFloats holds small numbers: split("") hands them out without an
// allocation each.
var asciiStrings = func() (t [utf8.RuneSelf]any) {
	for i := range t {
		t[i] = string(rune(i))
	}
	return t
}()

// fnSplit is split/1 on a string separator: gojq's splitString (no
// element for an empty input; strings.Split otherwise, which splits an
// empty separator into UTF-8 sequences).
func fnSplit(c *dctx, v, x any) (any, bool) {
	s, t, ok := strings2(v, x)
	if !ok || !c.step(chargeString(len(s))) {
		return nil, false
	}
	if s == "" {
		return []any{}, true
	}
	if t == "" {
		// strings.Split(s, "")'s pieces, a UTF-8 sequence each (an
		// invalid byte alone), straight into the array; an ASCII
		// character is boxed once for all (Spark's memory strings are
		// split to check their digits, 4× per executor).
		n := utf8.RuneCountInString(s)
		if !c.step(n) || !c.alloc(arrayBytes(n)) {
			return nil, false
		}
		arr := make([]any, 0, n)
		for s != "" {
			if s[0] < utf8.RuneSelf {
				arr = append(arr, asciiStrings[s[0]])
				s = s[1:]
				continue
			}
			_, size := utf8.DecodeRuneInString(s)
			arr = append(arr, s[:size])
			s = s[size:]
		}
		return arr, true
	}
	// strings.Split's pieces, straight into the array.
	n := strings.Count(s, t) + 1
	if !c.step(n) || !c.alloc(arrayBytes(n)) {
		return nil, false
	}
	if n == 1 {
		// The one piece is the input, already boxed: AppWrapper splits
		// each key of a podSet's path at "[", which few have.
		return []any{v}, true
	}
	arr := make([]any, 0, n)
	for range n - 1 {
		i := strings.Index(s, t)
		arr = append(arr, s[:i])
		s = s[i+len(t):]
	}
	return append(arr, s), true
}

// fnJoin is join/1: the elements' text (null none, a boolean or a number
// as tostring gives it, a string itself) between separators. A separator
// other than a string declines, and so does an array or object element
// (an error in gojq).
func fnJoin(c *dctx, v, x any) (any, bool) {
	sep, ok := x.(string)
	if !ok {
		return nil, false
	}
	xs, ok := elements(c, v)
	if !ok {
		return nil, false
	}
	if len(xs) == 1 {
		if e, ok := xs[0].(string); ok {
			// One string joins to itself, boxed already (FlinkDeployment's
			// `split(" ") | join("")` of a memory without spaces).
			if !c.step(chargeString(len(sep))+1) || !c.step(chargeString(len(e))) || !c.alloc(len(e)) {
				return nil, false
			}
			return xs[0], true
		}
	}
	var sb strings.Builder
	for i, e := range xs {
		if i > 0 {
			sb.WriteString(sep)
		}
		switch y := e.(type) {
		case nil:
		case string:
			sb.WriteString(y)
		case bool:
			sb.WriteString(strconv.FormatBool(y))
		case []any, map[string]any:
			return nil, false
		default:
			s, ok := fnToString(c, e)
			if !ok {
				return nil, false
			}
			sb.WriteString(s.(string))
		}
		if !c.step(chargeString(len(sep)) + 1) {
			return nil, false
		}
	}
	if !c.step(chargeString(sb.Len())) || !c.alloc(sb.Len()) {
		return nil, false
	}
	return sb.String(), true
}

func fnASCIIDowncase(c *dctx, v any) (any, bool) { return asciiCase(c, v, 'A', 'Z', 'a'-'A') }

func fnASCIIUpcase(c *dctx, v any) (any, bool) { return asciiCase(c, v, 'a', 'z', 'A'-'a') }

// asciiCase maps the ASCII letters lo…hi of a string by delta, leaving
// any other character (and invalid UTF-8, as strings.Map would not)
// as it is.
func asciiCase(c *dctx, v any, lo, hi byte, delta int) (any, bool) {
	s, ok := v.(string)
	if !ok || !utf8.ValidString(s) || !c.step(chargeString(len(s))) || !c.alloc(len(s)) {
		return nil, false
	}
	i := 0
	for i < len(s) && (s[i] < lo || s[i] > hi) {
		i++
	}
	if i == len(s) {
		return v, true // unchanged: the input, boxed already
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if b[i] >= lo && b[i] <= hi {
			b[i] = byte(int(b[i]) + delta)
		}
	}
	return string(b), true
}

// fnToNumber is tonumber: a number as it is; a string in JSON's number
// syntax (a subset of what gojq accepts) parsed as gojq parses it, while
// the result is within ±2^53; anything else declines.
func fnToNumber(c *dctx, v any) (any, bool) {
	s, ok := v.(string)
	if !ok {
		if _, ok := dnumber(v); ok {
			return v, true
		}
		return nil, false
	}
	if !c.step(chargeString(len(s))) || !jsonNumber(s) {
		return nil, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, false
	}
	if math.Abs(f) >= maxExactFloat {
		return nil, false
	}
	return boxFloat(f), true
}

// jsonNumber reports s in the syntax -?digits(.digits)?([eE][+-]?digits)?,
// which gojq's lexer accepts (it accepts more, which declines here).
func jsonNumber(s string) bool {
	i := 0
	digits := func() bool {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	if !digits() {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(s)
}

// anyAllOfNode is any(gen; cond) and all(gen; cond): gojq's
// `isempty(gen | select(cond)) | not` and `isempty(gen | select(cond |
// not))`. gen is evaluated whole (an error after the deciding output,
// which gojq never reaches, only declines); cond on each output in turn,
// until one decides.
type anyAllOfNode struct {
	gen, cond dnode
	isAny     bool
}

func (n *anyAllOfNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	xs := c.buf()
	defer func() { c.free(xs) }()
	xs, ok := n.gen.eval(c, in, xs)
	if !ok || !c.step(len(xs)+1) || !c.alloc(slotBytes*len(xs)) {
		return out, false
	}
	return decideAnyAll(c, n.cond, xs, n.isAny, out)
}
