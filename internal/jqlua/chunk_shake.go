package jqlua

import (
	"strings"

	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// ShakeChunk returns the top-level statements of a chunk that its roots
// reach: the statements that define a root, every statement that defines
// nothing (a top-level call, an if, a return: the chunk's own work), and,
// transitively, the statements that define what a kept one names. A
// statement keeps the comment lines right above it (an accessor's jq).
// Kept statements stay in their order.
//
// A statement defines the locals it declares, the globals it assigns or
// declares as functions, and the entries of a table it assigns by a
// number key (Q[3] = function ...: "Q[3]", which an accessor call
// Q[3](v) names): an exported chunk's accessors (Q) are such entries, so
// a hook keeps only the accessors it calls. Names
// are found by scanning tokens, so a name only a nested scope shadows
// keeps its definition too: the result may keep more than it needs,
// never less. A chunk that does not parse is returned whole.
//
// It is the second half of jqlua's dependency walk over an export:
// ShakePortable then keeps the parts of the runtime that the shaken chunk
// names.
func ShakeChunk(src string, roots []string) string {
	parts, ok := splitChunk(src)
	if !ok {
		return src
	}
	needed := map[string]bool{}
	for _, r := range roots {
		needed[r] = true
	}
	kept := reached(len(parts), func(i int) ([]string, []string) { return parts[i].defines, parts[i].refs }, needed)
	var b strings.Builder
	for i, p := range parts {
		if kept[i] {
			b.WriteString(p.text)
		}
	}
	return b.String()
}

// reached is the walk of ShakeChunk and ShakePortable over n parts, each
// defining and naming names (part): it keeps a part that defines nothing
// or a needed name and adds what a kept part names to needed, until
// nothing changes.
func reached(n int, part func(i int) (defines, refs []string), needed map[string]bool) []bool {
	kept := make([]bool, n)
	for changed := true; changed; {
		changed = false
		for i := range n {
			if kept[i] {
				continue
			}
			defines, refs := part(i)
			keep := len(defines) == 0
			for _, d := range defines {
				keep = keep || needed[d]
			}
			if !keep {
				continue
			}
			kept[i], changed = true, true
			for _, r := range refs {
				needed[r] = true
			}
		}
	}
	return kept
}

// chunkPart is a top-level statement of a chunk with the comment and
// blank lines above it.
type chunkPart struct {
	text    string
	defines []string
	refs    []string
}

// splitChunk splits a chunk into its top-level statements, every byte in
// one of them (the comment lines after the last go with it); false when
// it does not parse or a line holds parts of two statements.
func splitChunk(src string) ([]chunkPart, bool) {
	// The parser counts a carriage return as a line break too; lines here
	// are cut at "\n" alone.
	if strings.ContainsRune(src, '\r') {
		return nil, false
	}
	stmts, err := parse.Parse(strings.NewReader(src), "chunk")
	if err != nil || len(stmts) == 0 {
		return nil, false
	}
	lines := strings.SplitAfter(src, "\n")
	starts := make([]int, len(stmts))
	for i, st := range stmts {
		s := st.Line() - 1
		if s < 0 || s >= len(lines) {
			return nil, false
		}
		floor := 0
		if i > 0 {
			if s <= stmts[i-1].Line()-1 {
				return nil, false
			}
			floor = stmts[i-1].Line()
		}
		for s-1 >= floor && commentOrBlank(lines[s-1]) {
			s--
		}
		starts[i] = s
	}
	starts[0] = 0
	parts := make([]chunkPart, len(stmts))
	for i, st := range stmts {
		stop := len(lines)
		if i+1 < len(starts) {
			stop = starts[i+1]
		}
		text := strings.Join(lines[starts[i]:stop], "")
		// A statement that ends on the line the next begins on is not cut
		// at a line: then the chunk is not split.
		if alone, err := parse.Parse(strings.NewReader(text), "statement"); err != nil || len(alone) != 1 {
			return nil, false
		}
		parts[i] = chunkPart{text: text, defines: chunkDefines(st), refs: chunkReferences(text)}
	}
	return parts, true
}

// chunkDefines is defines, with the entries a statement assigns by a
// number key (Q[3]).
func chunkDefines(st ast.Stmt) []string {
	out := defines(st)
	if s, ok := st.(*ast.AssignStmt); ok {
		for _, lhs := range s.Lhs {
			if n := numberEntry(lhs); n != "" {
				out = append(out, n)
			}
		}
	}
	return out
}

// numberEntry names t[n], a variable indexed by a number literal; "" for
// anything else.
func numberEntry(e ast.Expr) string {
	x, ok := e.(*ast.AttrGetExpr)
	if !ok {
		return ""
	}
	obj, isIdent := x.Object.(*ast.IdentExpr)
	key, isNumber := x.Key.(*ast.NumberExpr)
	if !isIdent || !isNumber {
		return ""
	}
	return obj.Value + "[" + key.Value + "]"
}

// chunkReferences is references, with t[n] for every variable indexed by
// a number literal (the variable itself is named too).
func chunkReferences(text string) []string {
	out := references(text)
	sc := parse.NewScanner(strings.NewReader(text), "chunk")
	lx := &parse.Lexer{}
	var window [4]ast.Token // the last four tokens, oldest first
	for {
		tok, err := sc.Scan(lx)
		if err != nil || tok.Type <= 0 {
			return out
		}
		lx.PrevTokenType = tok.Type
		copy(window[:], window[1:])
		window[3] = tok
		id, open, num, end := window[0], window[1], window[2], window[3]
		if id.Type == parse.TIdent && open.Type == '[' && num.Type == parse.TNumber && end.Type == ']' {
			out = append(out, id.Str+"["+num.Str+"]")
		}
	}
}

// ChunkNames lists the names Lua source text mentions, as ShakeChunk
// reads them: roots that keep what a chunk appended after a shaken one
// (an override) names.
func ChunkNames(text string) []string { return chunkReferences(text) }
