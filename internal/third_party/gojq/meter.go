package gojq

// karta patch: metering. Not part of upstream gojq.
//
// gojq runs a query to completion inside a single builtin: `"x" * 1e8`
// builds a 100 MB string, `tojson` of a value that shares subtrees
// (`[.,.,.,.] | [.,.,.,.] | …`) serialises every copy, `==` and `sort`
// compare them node by node, and none of it looks at a context. karta
// evaluates jq written by other teams, so every evaluation must stay within
// the call's limits. A context that implements Meter is charged:
//
//   - one step per VM instruction (through Done, as before);
//   - before every internal function runs, the work it will do and the
//     bytes it will allocate, estimated from its arguments on the high side
//     (chargeCall); values are measured as jq sees them, shared subtrees
//     counted each time, one step per node visited, so measuring is itself
//     bounded by the step budget;
//   - every object and array element the VM builds, and every iteration's
//     buffer.
//
// A charge that fails ends the evaluation at once: its error is returned by
// Next and cannot be caught by try, `?` or `//`, like a cancelled context.
// Without a Meter nothing changes.

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// Meter is implemented by a context that meters an evaluation.
type Meter interface {
	// ChargeSteps charges n steps of work; an error ends the evaluation.
	ChargeSteps(n int64) error
	// ChargeMemory charges n bytes about to be allocated; an error ends
	// the evaluation before they are.
	ChargeMemory(n int64) error
}

// Estimated sizes of Go values, on the high side.
const (
	elemBytes     = 16 // an interface value in a slice
	sliceBytes    = 24
	mapBytes      = 48
	mapEntryBytes = 64 // key header, value, bucket overhead
	numberJSON    = 24 // the longest JSON text of a float64
	matchBytes    = 512
	flushEvery    = 256 // nodes measured between charges
)

func objectBytes(n int) int64 { return mapBytes + int64(n)*mapEntryBytes }

func arrayBytes(n int) int64 { return sliceBytes + int64(n)*elemBytes }

// mulSat multiplies non-negative numbers, saturating.
func mulSat(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// measurer walks values, charging a step per node as it goes.
type measurer struct {
	m       Meter
	pending int64
	err     error
	// nodes counts every node visited; text is an upper bound of the JSON
	// text of everything visited; leaves counts the non-composite nodes.
	nodes, text, leaves int64
}

func (w *measurer) step() bool {
	w.nodes++
	if w.pending++; w.pending >= flushEvery {
		return w.flush()
	}
	return true
}

func (w *measurer) flush() bool {
	if w.err == nil && w.pending > 0 {
		w.err = w.m.ChargeSteps(w.pending)
	}
	w.pending = 0
	return w.err == nil
}

// walk measures v. It stops early once a charge has failed.
func (w *measurer) walk(v any) {
	if w.err != nil || !w.step() {
		return
	}
	switch v := v.(type) {
	case nil, bool:
		w.text += 5
		w.leaves++
	case int, float64:
		w.text += numberJSON
		w.leaves++
	case *big.Int:
		w.text += int64(v.BitLen()/3 + 2)
		w.leaves++
	case json.Number:
		w.text += int64(len(v))
		w.leaves++
	case string:
		w.text += jsonStringBytes(v)
		w.leaves++
		w.pending += int64(len(v) / 64)
	case []any:
		w.text += 2 + int64(len(v))
		for _, x := range v {
			if w.walk(x); w.err != nil {
				return
			}
		}
	case map[string]any:
		w.text += 2 + int64(len(v))
		for k, x := range v {
			w.text += jsonStringBytes(k) + 1
			if w.walk(x); w.err != nil {
				return
			}
		}
	default:
		w.text += numberJSON
		w.leaves++
	}
}

// jsonStringBytes bounds the JSON text of s: the quotes, the bytes, six for
// each byte that is escaped, three for each byte of invalid UTF-8.
func jsonStringBytes(s string) int64 {
	n := int64(len(s)) + 2
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == 0x7f {
			n += 5
		}
	}
	if !utf8.ValidString(s) {
		n += 2 * int64(len(s))
	}
	return n
}

// measure walks vs and charges the steps; it returns the walk's totals.
func measure(m Meter, vs ...any) (*measurer, error) {
	w := &measurer{m: m}
	for _, v := range vs {
		w.walk(v)
	}
	w.flush()
	return w, w.err
}

func isScalar(v any) bool {
	switch v.(type) {
	case []any, map[string]any:
		return false
	}
	return true
}

// chargeCall charges the internal function name about to run on input v
// with args (see Meter). Functions not listed run in constant time and
// allocate nothing that grows with their arguments.
func chargeCall(m Meter, name string, v any, args []any) error {
	switch name {
	case "_add":
		if isBig(args[0]) || isBig(args[1]) {
			return chargeBigLinear(m, args[0], args[1])
		}
		return m.ChargeMemory(addBytes(args[0], args[1]))
	case "_divide", "_modulo":
		if isBig(args[0]) || isBig(args[1]) {
			a, b := bigWords(args[0]), bigWords(args[1])
			return chargeBoth(m, mulSat(a, b), 8*(a+b)+sliceBytes)
		}
		if name == "_divide" {
			return chargeSplit(m, args[0], args[1])
		}
		return nil
	case "_negate":
		if isBig(v) {
			return chargeBigLinear(m, v, nil)
		}
		return nil
	case "_subtract":
		if isBig(args[0]) || isBig(args[1]) {
			return chargeBigLinear(m, args[0], args[1])
		}
		l, lok := args[0].([]any)
		r, rok := args[1].([]any)
		if !lok || !rok {
			return nil
		}
		w, err := measure(m, l)
		if err != nil {
			return err
		}
		if err := m.ChargeSteps(mulSat(w.nodes, int64(len(r)))); err != nil {
			return err
		}
		return m.ChargeMemory(arrayBytes(len(l)))
	case "_multiply":
		return chargeMultiply(m, args[0], args[1])
	case "split":
		return chargeSplit(m, v, args[0])
	case "_equal", "_notequal", "_greater", "_less", "_greatereq", "_lesseq":
		if isScalar(args[0]) || isScalar(args[1]) {
			return nil // a scalar ends the comparison at its first step
		}
		_, err := measure(m, args[0], args[1])
		return err
	case "contains", "inside":
		l, r := v, args[0]
		if name == "inside" {
			l, r = r, l
		}
		return chargeContains(m, l, r)
	case "bsearch", "min", "max", "_min_by", "_max_by":
		_, err := measure(m, append([]any{v}, args...)...)
		return err
	case "indices", "index", "rindex", "_index":
		return chargeIndices(m, name, v, args)
	case "_slice":
		if s, ok := args[0].(string); ok {
			return m.ChargeSteps(int64(len(s) / 16))
		}
		return nil
	case "keys":
		n := lengthOf(v)
		return chargeBoth(m, mulSat(n, int64(log2(n))+1), arrayBytes(int(n)))
	case "add":
		vs, ok := v.([]any)
		if !ok {
			if o, ok := v.(map[string]any); ok {
				vs = make([]any, 0, len(o))
				for _, x := range o {
					vs = append(vs, x)
				}
			}
		}
		var b int64
		for _, x := range vs {
			b = addSat(b, addBytes(x, nil))
		}
		return chargeBoth(m, int64(len(vs)), 2*b)
	case "join":
		vs, ok := v.([]any)
		if !ok {
			return nil
		}
		sep, _ := args[0].(string)
		b := mulSat(int64(len(sep)), int64(len(vs)))
		for _, x := range vs {
			if s, ok := x.(string); ok {
				b = addSat(b, int64(len(s)))
			} else {
				b = addSat(b, numberJSON)
			}
		}
		return chargeBoth(m, int64(len(vs)), 2*b)
	case "tonumber":
		if s, ok := v.(string); ok {
			return chargeBoth(m, int64(len(s)/64)+digitRunsCost(s), 2*int64(len(s)))
		}
		return nil
	case "reverse", "explode", "ascii_downcase", "ascii_upcase", "implode", "utf8bytelength",
		"ltrimstr", "rtrimstr", "trimstr", "startswith", "endswith", "ltrim", "rtrim", "trim":
		n := lengthOf(v)
		if s, ok := v.(string); ok {
			n = int64(len(s))
		}
		switch name {
		case "reverse", "explode":
			return chargeBoth(m, n/8, arrayBytes(int(n)))
		case "ascii_downcase", "ascii_upcase", "implode":
			return chargeBoth(m, n/8, 4*n)
		}
		return m.ChargeSteps(n / 64)
	case "tojson", "tostring", "error":
		x := v
		if name == "error" && len(args) > 0 {
			x = args[0] // error(msg); the message is printed as JSON
		}
		if _, ok := x.(string); ok && name != "tojson" {
			return nil
		}
		return chargeText(m, 2, x)
	case "format", "_tohtml", "_touri", "_tourid", "_tocsv", "_totsv", "_tosh", "_tobase64", "_tobase64d":
		// The escapes of @html, @uri and @sh at most sextuple the text.
		return chargeText(m, 6, v)
	case "fromjson":
		if s, ok := v.(string); ok {
			return chargeBoth(m, int64(len(s)/8)+digitRunsCost(s), 32*int64(len(s)))
		}
		return nil
	case "flatten":
		w, err := measure(m, v)
		if err != nil {
			return err
		}
		return m.ChargeMemory(arrayBytes(int(min(w.nodes, math.MaxInt32))))
	case "sort", "_sort_by", "_group_by", "unique", "_unique_by":
		w, err := measure(m, append([]any{v}, args...)...)
		if err != nil {
			return err
		}
		n := lengthOf(v)
		if err := m.ChargeSteps(mulSat(w.nodes, int64(log2(n)))); err != nil {
			return err
		}
		return m.ChargeMemory(3 * arrayBytes(int(n)))
	case "transpose":
		vs, _ := v.([]any)
		var longest int64
		for _, x := range vs {
			longest = max(longest, lengthOf(x))
		}
		return chargeBoth(m, int64(len(vs)), mulSat(longest, arrayBytes(len(vs))))
	case "setpath", "_setpath", "getpath", "_delpaths", "delpaths":
		return chargePath(m, name, v, args)
	case "_match":
		return chargeMatch(m, v, args)
	case "strftime", "strflocaltime", "strptime":
		if s, ok := args[0].(string); ok {
			return m.ChargeMemory(16 * int64(len(s)))
		}
		return nil
	case "@base32", "_tobase32", "_tobase32d":
		return chargeText(m, 2, v)
	}
	return nil
}

func chargeBoth(m Meter, steps, bytes int64) error {
	if err := m.ChargeSteps(steps); err != nil {
		return err
	}
	return m.ChargeMemory(bytes)
}

// chargeText charges the serialisation of v to text: its nodes as steps,
// mult times its JSON text as memory.
func chargeText(m Meter, mult int64, v any) error {
	if s, ok := v.(string); ok {
		return m.ChargeMemory(mulSat(mult, jsonStringBytes(s)))
	}
	w, err := measure(m, v)
	if err != nil {
		return err
	}
	return m.ChargeMemory(mulSat(mult, w.text))
}

// addBytes is what l + r allocates (r nil: what adding l to a sum does).
func addBytes(l, r any) int64 {
	switch l := l.(type) {
	case string:
		s, _ := r.(string)
		return int64(len(l) + len(s))
	case []any:
		x, _ := r.([]any)
		return arrayBytes(len(l) + len(x))
	case map[string]any:
		x, _ := r.(map[string]any)
		return objectBytes(len(l) + len(x))
	case nil:
		if r != nil {
			return 0
		}
	}
	return 0
}

func chargeMultiply(m Meter, l, r any) error {
	if isBig(l) || isBig(r) {
		// Schoolbook multiplication: a word product per pair of words.
		a, b := bigWords(l), bigWords(r)
		return chargeBoth(m, mulSat(a, b), 8*(a+b)+sliceBytes)
	}
	if s, ok := l.(string); ok {
		return chargeRepeat(m, s, r)
	}
	if s, ok := r.(string); ok {
		return chargeRepeat(m, s, l)
	}
	lo, lok := l.(map[string]any)
	ro, rok := r.(map[string]any)
	if !lok || !rok {
		return nil
	}
	w, err := measure(m, lo, ro)
	if err != nil {
		return err
	}
	return m.ChargeMemory(objectBytes(int(min(w.nodes, math.MaxInt32))))
}

// chargeRepeat charges s * n before the string is built.
func chargeRepeat(m Meter, s string, n any) error {
	f, ok := ToFloat64(n)
	if !ok || !(f > 0) {
		return nil
	}
	c := int64(min(f, math.MaxInt32))
	return chargeBoth(m, mulSat(int64(len(s)), c)/64, mulSat(int64(len(s)), c))
}

// chargeSplit charges s split by sep: each piece is a string header; the
// pieces share the bytes of s.
func chargeSplit(m Meter, s, sep any) error {
	str, ok := s.(string)
	if !ok {
		return nil
	}
	t, _ := sep.(string)
	pieces := int64(len(str)) + 1
	if len(t) > 0 {
		pieces = int64(len(str)/len(t)) + 1
	}
	return chargeBoth(m, int64(len(str)/16), arrayBytes(int(pieces))+pieces*elemBytes)
}

func chargeIndices(m Meter, name string, v any, args []any) error {
	in, key := v, args[0]
	if name == "_index" {
		in, key = args[0], args[1]
		if _, ok := key.([]any); !ok {
			return nil // a plain index or key
		}
	}
	switch in := in.(type) {
	case string:
		// Both are exploded into arrays of runes, and the key is compared
		// at every position of the subject.
		k, _ := key.(string)
		steps := mulSat(int64(len(in))+1, int64(len(k))+1) / 8
		return chargeBoth(m, steps, 2*arrayBytes(len(in)+len(k)+1))
	case []any:
		w, err := measure(m, key)
		if err != nil {
			return err
		}
		return chargeBoth(m, mulSat(w.nodes, int64(len(in))), arrayBytes(len(in)))
	}
	return nil
}

// chargePath charges setpath (which copies every container along the path
// it does not own, and grows arrays up to the index it writes), getpath and
// delpaths (which sort their paths).
func chargePath(m Meter, name string, v any, args []any) error {
	switch name {
	case "getpath":
		return m.ChargeSteps(lengthOf(args[0]))
	case "_delpaths", "delpaths":
		_, err := measure(m, args[0])
		return err
	}
	path, ok := args[0].([]any)
	if !ok {
		return nil
	}
	var a allocator
	if name == "_setpath" {
		a, _ = args[2].(allocator)
	}
	var steps, bytes int64
	cur := v
	for _, p := range path {
		steps++
		switch c := cur.(type) {
		case []any:
			if !a.allocated(c) {
				bytes = addSat(bytes, arrayBytes(len(c)))
				steps = addSat(steps, int64(len(c)))
			}
		case map[string]any:
			if !a.allocated(c) {
				bytes = addSat(bytes, objectBytes(len(c)))
				steps = addSat(steps, int64(len(c)))
			}
		}
		if i, ok := ToInt(p); ok {
			arr, _ := cur.([]any)
			if i >= len(arr) {
				bytes = addSat(bytes, arrayBytes(min(i, 0x20000000)+1))
			}
			if i >= 0 && i < len(arr) {
				cur = arr[i]
			} else {
				cur = nil
			}
			continue
		}
		if k, ok := p.(string); ok {
			obj, _ := cur.(map[string]any)
			cur = obj[k]
			continue
		}
		cur = nil
	}
	return chargeBoth(m, steps, bytes)
}

// chargeMatch charges a regular expression match by its compiled
// program, not its text: (x{1,1000}){1,1000} is 19 bytes and a million
// instructions. Compiling charges a step and instBytes per instruction
// (the program is compiled twice, with its probe); matching, which Go's
// engine keeps linear in the subject times the program, a step per
// instruction per byte of the subject; a global match makes at most one
// match object per position, each with its capture groups.
func chargeMatch(m Meter, v any, args []any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	re, _ := args[0].(string)
	flags, _ := args[1].(string)
	insts, groups := regexpProgram(re, flags)
	if err := chargeBoth(m, insts, mulSat(2*insts, instBytes)); err != nil {
		return err
	}
	matches := int64(1)
	if strings.Contains(flags, "g") {
		matches = int64(len(s)) + 1
	}
	steps := mulSat(int64(len(s))+1, insts)
	return chargeBoth(m, steps, mulSat(matches, matchBytes+mulSat(groups+1, 2*elemBytes+objectBytes(4))))
}

// instBytes is the size of one instruction of a compiled regexp, with its
// share of the engine's per-instruction state.
const instBytes = 64

// regexpProgram estimates, from the parse tree, how many instructions
// regexp.Compile makes of re under gojq's flags (on the high side: every
// counted repetition x{n,m} is m copies of x), and how many capture
// groups it has. Parsing is linear in the text. A text that does not
// parse costs nothing: gojq fails to compile it the same way.
func regexpProgram(re, flags string) (insts, groups int64) {
	if strings.ContainsRune(flags, 'i') {
		re = "(?i)" + re
	}
	if strings.ContainsRune(flags, 'm') {
		re = "(?s)" + re
	}
	t, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return 1, 0
	}
	return regexpSize(t) + 1, int64(t.MaxCap()) // and the match instruction
}

func regexpSize(re *syntax.Regexp) int64 {
	// A literal is an instruction per rune, a class one instruction that
	// searches its ranges.
	n := int64(1 + len(re.Rune))
	switch re.Op {
	case syntax.OpCharClass:
		n = int64(1 + log2(int64(len(re.Rune))))
	case syntax.OpCapture:
		n = 2 // saving where it starts and ends
	}
	for _, sub := range re.Sub {
		n = addSat(n, regexpSize(sub))
	}
	if re.Op == syntax.OpRepeat {
		copies := int64(max(re.Max, re.Min, 1))
		n = addSat(mulSat(n, copies), 1)
	}
	return n
}

// isBig reports whether v is an integer gojq holds as a math/big.Int.
func isBig(v any) bool {
	_, ok := v.(*big.Int)
	return ok
}

// bigWords is the number of 64-bit words of a number (1 for one that is
// not a big integer).
func bigWords(v any) int64 {
	if b, ok := v.(*big.Int); ok {
		return int64(b.BitLen()/64) + 1
	}
	return 1
}

// chargeBigLinear charges an addition, subtraction or negation of big
// integers: a step per word, and the result's words.
func chargeBigLinear(m Meter, l, r any) error {
	n := bigWords(l) + bigWords(r)
	return chargeBoth(m, n, 8*n+sliceBytes)
}

// digitRunsCost charges parsing the numbers in s: math/big converts a
// run of n decimal digits in about (n/19)² word operations, and a 1 MB
// run of digits takes seconds; a step is 16 of them.
func digitRunsCost(s string) int64 {
	var total, run int64
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] >= '0' && s[i] <= '9' {
			run++
			continue
		}
		if run > 19 {
			w := run/19 + 1
			total = addSat(total, mulSat(w, w)/16)
		}
		run = 0
	}
	return total
}

// chargeContains charges l contains r: every leaf of r may be compared
// with every leaf of l (a string comparison scanning the string), so
// the nodes of r times the nodes and the text of l.
func chargeContains(m Meter, l, r any) error {
	if isScalar(l) && isScalar(r) {
		return nil // one comparison, or strings.Contains: linear
	}
	wl, err := measure(m, l)
	if err != nil {
		return err
	}
	wr, err := measure(m, r)
	if err != nil {
		return err
	}
	return m.ChargeSteps(mulSat(wr.nodes, wl.nodes+wl.text/16) / 8)
}

func lengthOf(v any) int64 {
	switch v := v.(type) {
	case []any:
		return int64(len(v))
	case map[string]any:
		return int64(len(v))
	case string:
		return int64(len(v))
	}
	return 0
}

func log2(n int64) int {
	l := 0
	for n > 1 {
		n >>= 1
		l++
	}
	return l + 1
}

// chargeIter charges iterating v, an array or object of n elements: the
// buffer of paths and values, and sorting an object's keys.
func chargeIter(m Meter, v any, n int64) error {
	if _, ok := v.([]any); ok {
		return m.ChargeMemory(n * 2 * elemBytes)
	}
	if _, ok := v.(map[string]any); ok {
		return chargeBoth(m, mulSat(n, int64(log2(n))), n*2*elemBytes)
	}
	return nil
}

// Budget is a context that meters an evaluation with fixed limits, for jq
// that runs outside a metered call (folding constants at translation time,
// say). Use one per evaluation, on one goroutine.
type Budget struct {
	context.Context
	steps, memory int64
	err           error
}

// ErrBudget is the error an evaluation under a Budget ends with.
var ErrBudget = errors.New("jq evaluation budget exceeded")

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// NewBudget meters an evaluation under parent with at most steps steps and
// memory bytes.
func NewBudget(parent context.Context, steps, memory int64) *Budget {
	return &Budget{Context: parent, steps: steps, memory: memory}
}

// Done counts a step.
func (b *Budget) Done() <-chan struct{} {
	if b.steps--; b.steps < 0 && b.err == nil {
		b.err = ErrBudget
	}
	if b.err != nil {
		return closedChan
	}
	return b.Context.Done()
}

// Err is ErrBudget once the budget is spent, else the parent's error.
func (b *Budget) Err() error {
	if b.err != nil {
		return b.err
	}
	return b.Context.Err()
}

// ChargeSteps implements Meter.
func (b *Budget) ChargeSteps(n int64) error {
	if b.steps -= n; b.steps < 0 && b.err == nil {
		b.err = ErrBudget
	}
	return b.Err()
}

// ChargeMemory implements Meter.
func (b *Budget) ChargeMemory(n int64) error {
	if b.memory -= n; b.memory < 0 && b.err == nil {
		b.err = ErrBudget
	}
	return b.Err()
}
