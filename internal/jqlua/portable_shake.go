package jqlua

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// ShakePortable returns PortableRuntime with only the parts that code —
// the rest of a chunk that begins with the runtime — needs: the J and JX
// functions code names (J.index, JX.message...), and, transitively, the
// locals and functions those use. A chunk that runs a handful of
// primitives then builds a handful of closures on every run instead of the
// whole runtime's, which is most of the cost of running an exported script
// on a small object.
//
// The runtime's top level (the body of the function that builds J and JX)
// is a list of definitions: local declarations, local functions, J.name
// and JX.name functions and assignments. A definition is kept when a kept
// part names what it defines; a statement that defines nothing is always
// kept. Names are found by scanning tokens, so a name that only a nested
// scope's own local shadows keeps its definition too: the result may keep
// more than it needs, never less. The runtime never indexes J or JX with
// a computed key, which is what makes the scan complete.
//
// The error and encoding machinery it keeps is built on first need (warm,
// see coldNames): for a target that compiles a chunk once and runs it
// often (Argo CD). ShakePortableEager is the same runtime built whole on
// every run.
func ShakePortable(code string) string { return shakePortable(code, true) }

// ShakePortableEager is ShakePortable with every kept part defined where
// the runtime defines it, no warm and no stubs: for a target that compiles
// a chunk on every call (Karmada), whose compile of warm's declarations,
// stubs and deeper indentation costs more than the closures it saves.
func ShakePortableEager(code string) string { return shakePortable(code, false) }

func shakePortable(code string, lazy bool) string {
	rt, err := exportParts()
	if err != nil {
		// The runtime is fixed at build time; TestShakePortable checks
		// that it can be analysed.
		return PortableRuntime
	}
	needed := map[string]bool{"J": true, "JX": true}
	for _, ref := range references(code) {
		if strings.HasPrefix(ref, "J.") || strings.HasPrefix(ref, "JX.") {
			needed[ref] = true
		}
	}
	kept := reached(len(rt.parts), func(i int) ([]string, []string) { return rt.parts[i].defines, rt.parts[i].refs }, needed)
	cold := make([]bool, len(rt.parts))
	if lazy {
		cold = coldParts(rt, kept)
	}
	var b strings.Builder
	b.WriteString(rt.head)
	var names []string
	for i, p := range rt.parts {
		if cold[i] {
			names = append(names, p.defines...)
		}
	}
	if len(names) > 0 {
		b.WriteString("  -- Built on first need (warm), see jqlua.ShakePortable.\n")
		b.WriteString("  local " + strings.Join(names, ", ") + "\n")
	}
	for i, p := range rt.parts {
		if kept[i] && !cold[i] && !p.isReturn {
			b.WriteString(p.neededText(needed))
		}
	}
	if len(names) > 0 {
		b.WriteString("\n  -- warm builds the error and encoding machinery; until it runs, the\n")
		b.WriteString("  -- names the rest of the runtime calls are stubs that run it first.\n")
		b.WriteString("  local function warm()\n")
		for i, p := range rt.parts {
			if cold[i] {
				b.WriteString(p.warmText)
			}
		}
		b.WriteString("  end\n")
		for _, n := range stubs(rt, kept, cold) {
			fmt.Fprintf(&b, "  function %s(...) warm() return %s(...) end\n", n, n)
		}
		b.WriteString("\n")
	}
	for _, p := range rt.parts {
		if p.isReturn {
			b.WriteString(p.text)
		}
	}
	b.WriteString(rt.tail)
	return dedent(b.String())
}

// dedent cuts the indentation of the wrapper's body, two spaces a line,
// from a shaken runtime: the wrapper, `local J, JX = (function() ...
// end)()`, only keeps the runtime's locals out of the chunk's 200, and
// its indentation would be a tenth of the runtime's bytes in every
// script. Lines that do not begin with two spaces (the head's comments,
// the wrapper's own lines) stay as they are; the runtime has no long
// strings, so every line is code or a comment.
func dedent(src string) string {
	var b strings.Builder
	b.Grow(len(src))
	for _, l := range strings.SplitAfter(src, "\n") {
		b.WriteString(strings.TrimPrefix(l, "  "))
	}
	return b.String()
}

// coldNames are the runtime's error and encoding machinery: what an error
// message (gojq's typeErrorPreview), an encoding (tojson, tostring of a
// number), the slow paths of indexing (string indexing, slices) and of
// comparison (values of two types, objects) need, and a health script on
// the happy path never runs. A chunk builds the
// closures of its runtime on every run, so ShakePortable moves the kept
// ones into a function, warm, that defines them on first need: each name
// the rest of the runtime calls is a stub that runs warm, which replaces
// every stub with its function, and calls it. A cold name the rest of the
// runtime reads as a value (not a function) stays where it is.
var coldNames = map[string]bool{
	"runeStarts": true, "REPLACEMENT": true, "ZEROS": true, "decimal": true, "TRAILING": true,
	"formatNumber": true, "ESCAPES": true, "quote": true, "put": true,
	"encode": true, "tojson": true, "preview": true, "typeName": true, "tep": true, "binopError": true,
	"func0Error": true, "func1Error": true, "indexString": true, "indices": true, "sliceBounds": true,
	"slice": true, "index": true, "intLike": true, "trunc": true, "clampIndex": true, "runeSize": true,
	"sortedKeys": true, "compareValues": true, "ORDER": true,
}

// coldParts marks the kept parts that warm defines: those that define
// cold names, less those whose name a part outside warm reads other than
// by calling a stub (a value, not a function, or a name read while the
// runtime is built, such as J.tojson = tojson), repeatedly.
func coldParts(rt *portableRuntime, kept []bool) []bool {
	cold := make([]bool, len(rt.parts))
	for i, p := range rt.parts {
		cold[i] = kept[i] && p.warmText != "" && coldNames[p.defines[0]]
	}
	for changed := true; changed; {
		changed = false
		hotRefs, buildRefs := map[string]bool{}, map[string]bool{}
		for i, p := range rt.parts {
			if kept[i] && !cold[i] {
				for _, r := range p.refs {
					hotRefs[r] = true
					buildRefs[r] = buildRefs[r] || !p.deferred
				}
			}
		}
		for i, p := range rt.parts {
			if cold[i] && (!p.function || buildRefs[p.defines[0]]) && hotRefs[p.defines[0]] {
				cold[i], changed = false, true
			}
		}
	}
	return cold
}

// stubs are the cold functions the rest of the runtime names.
func stubs(rt *portableRuntime, kept, cold []bool) []string {
	hotRefs := map[string]bool{}
	for i, p := range rt.parts {
		if kept[i] && !cold[i] {
			for _, r := range p.refs {
				hotRefs[r] = true
			}
		}
	}
	var out []string
	for i, p := range rt.parts {
		if cold[i] && hotRefs[p.defines[0]] {
			out = append(out, p.defines[0])
		}
	}
	return out
}

// portablePart is a top-level statement of the runtime's body with the
// comment lines above it.
type portablePart struct {
	text    string
	defines []string // locals, and J.name and JX.name fields
	refs    []string
	// warmText is text as a statement of warm, for a part that defines
	// one local with a value: the assignment of the local declared before
	// (its "local " dropped); "" for any other part.
	warmText string
	// function: the value is a function.
	function bool
	// isReturn: the body's final return statement.
	isReturn bool
	// deferred: the part only defines functions, so the names it mentions
	// are read when they run, not when the runtime is built.
	deferred bool
	// aliases are the names and values of a declaration of several locals
	// by plain values on one line (local floor, abs = math.floor,
	// math.abs), which neededText cuts to the names the rest needs; nil
	// for any other part.
	aliases [][2]string
}

// neededText is the part's text, a declaration of aliases cut to the
// names in needed.
func (p portablePart) neededText(needed map[string]bool) string {
	if p.aliases == nil {
		return p.text
	}
	var names, values []string
	for _, a := range p.aliases {
		if needed[a[0]] {
			names, values = append(names, a[0]), append(values, a[1])
		}
	}
	head, _, _ := strings.Cut(p.text, "local ")
	return head + "local " + strings.Join(names, ", ") + " = " + strings.Join(values, ", ") + "\n"
}

// plainValue is a value aliasesOf may cut out of a declaration: a name
// (math.floor), an empty table or a short string literal.
var plainValue = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.]*|\{\}|"[a-z]*")$`)

// aliasesOf reads the part text, of a statement declaring names, as a
// declaration of aliases: its last line "local a, b = x, y" with a value
// per name, each a plainValue; nil otherwise.
func aliasesOf(text string, names []string) [][2]string {
	lines := strings.SplitAfter(strings.TrimSuffix(text, "\n"), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	for _, l := range lines[:len(lines)-1] {
		if !commentOrBlank(l) {
			return nil
		}
	}
	lhs, rhs, ok := strings.Cut(strings.TrimPrefix(last, "local "), " = ")
	if !ok || len(names) < 2 || lhs != strings.Join(names, ", ") {
		return nil
	}
	values := strings.Split(rhs, ", ")
	if len(values) != len(names) {
		return nil
	}
	out := make([][2]string, len(names))
	for i, v := range values {
		if !plainValue.MatchString(v) {
			return nil
		}
		out[i] = [2]string{names[i], v}
	}
	return out
}

type portableRuntime struct {
	head, tail string
	parts      []portablePart
}

var portableParts = sync.OnceValues(func() (*portableRuntime, error) {
	return splitPortable(PortableRuntime)
})

// exportVariants are the runtime's locals an export defines otherwise,
// each by the local whose definition takes its place: tep, gojq's
// typeErrorPreview (`array ([1,2])`), by tepKind, the kind alone
// (`array`). The preview is JSON, and its encoder (encode, quote,
// formatNumber, sortedKeys, preview's cut...) is a third of a script
// that refuses values but never encodes one; Karmada has no shared
// library, so every rule's script would carry it. The runtime in full
// (PortableRuntime, what the tests compare with gojq) keeps the preview.
var exportVariants = map[string]string{"tep": "tepKind"}

// exportParts is the runtime ShakePortable shakes: PortableRuntime with
// each of exportVariants' locals defined by its variant's definition,
// renamed, and the variant's own definition left out.
var exportParts = sync.OnceValues(func() (*portableRuntime, error) {
	rt, err := portableParts()
	if err != nil {
		return nil, err
	}
	variantOf := map[string]string{}
	for name, variant := range exportVariants {
		variantOf[variant] = name
	}
	texts := map[string]string{}
	for _, p := range rt.parts {
		if name, ok := variantOf[p.defines0()]; ok {
			decl := "local function " + p.defines0() + "("
			if !strings.Contains(p.text, decl) {
				return nil, fmt.Errorf("%s is not declared as %q", p.defines0(), decl)
			}
			texts[name] = strings.Replace(p.text, decl, "local function "+name+"(", 1)
		}
	}
	var b strings.Builder
	b.WriteString(rt.head)
	for _, p := range rt.parts {
		d := p.defines0()
		switch {
		case variantOf[d] != "":
		case exportVariants[d] != "":
			if texts[d] == "" {
				return nil, fmt.Errorf("no definition of %s, which an export defines %s by", exportVariants[d], d)
			}
			b.WriteString(texts[d])
		default:
			b.WriteString(p.text)
		}
	}
	b.WriteString(rt.tail)
	return splitPortable(b.String())
})

// defines0 is the one name a part defines; "" for a part that defines
// none or several.
func (p portablePart) defines0() string {
	if len(p.defines) != 1 {
		return ""
	}
	return p.defines[0]
}

// splitPortable splits a runtime written as `local J, JX = (function()
// ... end)()` into the statements of the function's body.
func splitPortable(src string) (*portableRuntime, error) {
	chunk, err := parse.Parse(strings.NewReader(src), "portable")
	if err != nil {
		return nil, err
	}
	if len(chunk) != 1 {
		return nil, fmt.Errorf("want one statement, local J, JX = (function() ... end)(), found %d", len(chunk))
	}
	decl, ok := chunk[0].(*ast.LocalAssignStmt)
	if !ok || len(decl.Exprs) != 1 {
		return nil, errors.New("the runtime is not local J, JX = (function() ... end)()")
	}
	call, ok := decl.Exprs[0].(*ast.FuncCallExpr)
	if !ok {
		return nil, errors.New("the runtime is not local J, JX = (function() ... end)()")
	}
	fn, ok := call.Func.(*ast.FunctionExpr)
	if !ok || len(fn.Stmts) == 0 {
		return nil, errors.New("the runtime is not local J, JX = (function() ... end)()")
	}
	lines := strings.SplitAfter(src, "\n")
	// The line of "end)()", which closes the body (0-based).
	end := len(lines) - 1
	for end >= 0 && strings.TrimSpace(lines[end]) != "end)()" {
		end--
	}
	// Where each statement's text starts: its first line, moved up over
	// the comment and blank lines right above it (0-based).
	starts := make([]int, len(fn.Stmts))
	for i, st := range fn.Stmts {
		s := st.Line() - 1
		if i > 0 && s <= fn.Stmts[i-1].Line()-1 {
			return nil, fmt.Errorf("line %d: two statements start on one line", st.Line())
		}
		floor := decl.Line() // the line after `local J, JX = (function()`
		if i > 0 {
			floor = fn.Stmts[i-1].Line()
		}
		for s-1 >= floor && commentOrBlank(lines[s-1]) {
			s--
		}
		starts[i] = s
	}
	if end <= starts[len(starts)-1] {
		return nil, errors.New(`no "end)()" after the runtime's body`)
	}
	rt := &portableRuntime{
		head: strings.Join(lines[:starts[0]], ""),
		tail: strings.Join(lines[end:], ""),
	}
	for i, st := range fn.Stmts {
		stop := end
		if i+1 < len(starts) {
			stop = starts[i+1]
		}
		text := strings.Join(lines[starts[i]:stop], "")
		part := portablePart{text: text, defines: defines(st), refs: references(text)}
		_, part.isReturn = st.(*ast.ReturnStmt)
		part.deferred = definesFunctions(st)
		if la, ok := st.(*ast.LocalAssignStmt); ok && len(la.Names) == 1 && len(la.Exprs) == 1 {
			_, part.function = la.Exprs[0].(*ast.FunctionExpr)
			part.warmText = warmText(text)
		} else if ok && len(la.Names) == len(la.Exprs) {
			// The names it declares are not what it needs: its values
			// are, less the globals it localises under their own names
			// (local type, pairs = type, pairs), which no part defines.
			if part.aliases = aliasesOf(text, la.Names); part.aliases != nil {
				part.refs = nil
				for _, a := range part.aliases {
					for _, r := range references(a[1]) {
						if !slices.Contains(la.Names, r) {
							part.refs = append(part.refs, r)
						}
					}
				}
			}
		}
		rt.parts = append(rt.parts, part)
	}
	return rt, nil
}

// definesFunctions reports a statement that assigns functions only.
func definesFunctions(st ast.Stmt) bool {
	var exprs []ast.Expr
	switch s := st.(type) {
	case *ast.FuncDefStmt:
		return true
	case *ast.LocalAssignStmt:
		exprs = s.Exprs
	case *ast.AssignStmt:
		exprs = s.Rhs
	}
	for _, e := range exprs {
		if _, ok := e.(*ast.FunctionExpr); !ok {
			return false
		}
	}
	return len(exprs) > 0
}

// warmText is a part's text with "local " dropped from its statement's
// first line, indented for warm's body; "" when it does not begin so.
func warmText(text string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		if commentOrBlank(l) {
			continue
		}
		rest, ok := strings.CutPrefix(l, "  local ")
		if !ok {
			return ""
		}
		lines[i] = "  " + rest
		break
	}
	var b strings.Builder
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			b.WriteString("  ")
		}
		b.WriteString(l)
	}
	return b.String()
}

func commentOrBlank(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || (strings.HasPrefix(t, "--") && !strings.HasPrefix(t, "--[["))
}

// defines is what a top-level statement of the runtime's body defines.
func defines(st ast.Stmt) []string {
	switch s := st.(type) {
	case *ast.LocalAssignStmt:
		return s.Names
	case *ast.FuncDefStmt:
		if s.Name.Func != nil {
			if n := target(s.Name.Func); n != "" {
				return []string{n}
			}
		}
	case *ast.AssignStmt:
		var out []string
		for _, lhs := range s.Lhs {
			if n := target(lhs); n != "" {
				out = append(out, n)
			}
		}
		return out
	}
	return nil
}

// target names an assignment's target: a variable, or J.name and
// JX.name; "" for anything else.
func target(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.IdentExpr:
		return x.Value
	case *ast.AttrGetExpr:
		obj, ok := x.Object.(*ast.IdentExpr)
		key, isString := x.Key.(*ast.StringExpr)
		if ok && isString && (obj.Value == "J" || obj.Value == "JX") {
			return obj.Value + "." + key.Value
		}
	}
	return ""
}

// references lists the names Lua source text mentions: every identifier
// that is not a field name, and J.name and JX.name for the fields of J and
// JX. Comments and strings are skipped. Text that does not scan yields
// what was read before the error.
func references(text string) []string {
	sc := parse.NewScanner(strings.NewReader(text), "portable")
	lx := &parse.Lexer{}
	var out []string
	var prev, prev2 ast.Token
	for {
		tok, err := sc.Scan(lx)
		if err != nil || tok.Type <= 0 {
			return out
		}
		lx.PrevTokenType = tok.Type
		if tok.Type == parse.TIdent {
			switch {
			case prev.Type == '.' && prev2.Type == parse.TIdent && (prev2.Str == "J" || prev2.Str == "JX"):
				out = append(out, prev2.Str+"."+tok.Str)
			case prev.Type == '.' || prev.Type == ':':
			default:
				out = append(out, tok.Str)
			}
		}
		prev2, prev = prev, tok
	}
}

// ExportMessage is gojq's error message msg as a script that ShakePortable
// builds the runtime of words it: each refused value's kind without the
// JSON preview gojq puts after it (exportVariants), `expected an object
// but got: array` for `expected an object but got: array ([1,2])`. A
// preview is cut where gojq writes a typeErrorPreview: a kind, after ": ",
// " and ", "divide " or "modulo ", then " (", at most 30 bytes of JSON
// (or of JSON cut to end in " ..."), and ")". Other previews, such as
// has's argument in `has("a") cannot be applied to: ...`, stay, unless
// their text holds such a lead and kind itself.
func ExportMessage(msg string) string {
	var b strings.Builder
	for i := 0; i < len(msg); {
		if kind, n := previewAt(msg, i); n > 0 {
			b.WriteString(kind)
			i += n
			continue
		}
		b.WriteByte(msg[i])
		i++
	}
	return b.String()
}

// previewAt finds a typeErrorPreview at msg[i:], after one of its leads:
// its kind and its length, the kind's and the preview's " (...)"; 0 when
// none is there.
func previewAt(msg string, i int) (string, int) {
	lead := false
	for _, l := range []string{": ", " and ", "divide ", "modulo "} {
		lead = lead || strings.HasSuffix(msg[:i], l)
	}
	if !lead {
		return "", 0
	}
	for _, kind := range []string{"boolean", "number", "string", "array", "object"} {
		rest, ok := strings.CutPrefix(msg[i:], kind+" (")
		if !ok {
			continue
		}
		for j := 0; j < len(rest) && j <= 30; j++ {
			if rest[j] == ')' && isPreview(rest[:j]) {
				return kind, len(kind) + len(" (") + j + len(")")
			}
		}
	}
	return "", 0
}

// isPreview reports text gojq's Preview may write: JSON, or JSON cut to
// end in " ...", closed as its value is.
func isPreview(s string) bool {
	if json.Valid([]byte(s)) {
		return true
	}
	for _, t := range []string{` ..."`, " ...]", " ...}", " ..."} {
		if strings.HasSuffix(s, t) && len(s) <= 30 {
			return true
		}
	}
	return false
}
