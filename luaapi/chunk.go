package luaapi

import (
	"fmt"
	"sort"
	"strings"

	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// ChunkInfo is what a static read of a Lua chunk tells, without running it.
type ChunkInfo struct {
	// Globals are the global names the chunk's top level defines, with
	// `function Name()` or `Name = ...`, sorted and unique.
	Globals []string
	// EndsInReturn is true when the top level ends in a return statement:
	// the Argo CD health-script form.
	EndsInReturn bool
	// DefinesOnly is true when the top level only defines: global
	// functions by plain name, and locals bound to functions or constants.
	// Running it cannot fail, so it need not be tried before use.
	DefinesOnly bool
}

// SyntaxError is a chunk that does not parse.
type SyntaxError struct {
	Chunk string
	Msg   string
}

func (e *SyntaxError) Error() string { return e.Chunk + ": " + e.Msg }

// InspectChunk parses src (named chunk in messages) and reports its
// top-level global definitions and whether it ends in return. A chunk
// beyond the default Limits' source size or nesting depth is a
// *SourceLimitError, refused before it is parsed.
func InspectChunk(chunk, src string) (*ChunkInfo, error) {
	return InspectChunkWith(chunk, src, Limits{})
}

// InspectChunkWith is InspectChunk with the source limits of limits.
func InspectChunkWith(chunk, src string, limits Limits) (*ChunkInfo, error) {
	if err := limits.CheckSource(chunk, src); err != nil {
		return nil, err
	}
	stmts, err := parse.Parse(strings.NewReader(src), chunk)
	if err != nil {
		return nil, &SyntaxError{Chunk: chunk, Msg: cleanParseError(chunk, err)}
	}
	info := &ChunkInfo{}
	seen := map[string]bool{}
	addGlobal := func(e ast.Expr) {
		if id, ok := e.(*ast.IdentExpr); ok && !seen[id.Value] {
			seen[id.Value] = true
			info.Globals = append(info.Globals, id.Value)
		}
	}
	info.DefinesOnly = true
	for _, st := range stmts {
		info.DefinesOnly = info.DefinesOnly && definesOnly(st)
		switch s := st.(type) {
		case *ast.FuncDefStmt:
			if s.Name != nil && s.Name.Receiver == nil {
				addGlobal(s.Name.Func)
			}
		case *ast.AssignStmt:
			for _, lhs := range s.Lhs {
				addGlobal(lhs)
			}
		}
	}
	if n := len(stmts); n > 0 {
		_, info.EndsInReturn = stmts[n-1].(*ast.ReturnStmt)
	}
	sort.Strings(info.Globals)
	return info, nil
}

// definesOnly reports whether a top-level statement only defines a
// function or a local constant: `function Name()`, `local function f()`,
// `local x, y = 1, "s"`.
func definesOnly(st ast.Stmt) bool {
	switch s := st.(type) {
	case *ast.FuncDefStmt:
		if s.Name == nil || s.Name.Receiver != nil {
			return false
		}
		_, ok := s.Name.Func.(*ast.IdentExpr)
		return ok
	case *ast.LocalAssignStmt:
		for _, e := range s.Exprs {
			switch e.(type) {
			case *ast.FunctionExpr, *ast.NumberExpr, *ast.StringExpr, *ast.TrueExpr, *ast.FalseExpr, *ast.NilExpr:
			default:
				return false
			}
		}
		return true
	}
	return false
}

// cleanParseError turns gopher-lua's "<name> line:3(column:5) near 'x':
// syntax error" into "line 3 (column 5) near 'x': syntax error".
func cleanParseError(chunk string, err error) string {
	// gopher-lua pads its messages with runs of spaces.
	msg := strings.Join(strings.Fields(strings.TrimPrefix(strings.TrimSpace(err.Error()), chunk)), " ")
	var line, col int
	var rest string
	if n, _ := fmt.Sscanf(msg, "line:%d(column:%d)", &line, &col); n == 2 {
		if i := strings.Index(msg, ")"); i >= 0 {
			rest = strings.TrimSpace(msg[i+1:])
		}
		return fmt.Sprintf("line %d (column %d) %s", line, col, rest)
	}
	return msg
}
