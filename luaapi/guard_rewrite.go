package luaapi

import (
	"strconv"

	"github.com/yuin/gopher-lua/ast"
)

// The guard rewrite makes the allocations a script's own code does visible
// to the memory guard. gopher-lua has no allocation hook: the .. operator,
// a table constructor, a closure and a store t[k] = v are VM instructions,
// and one store, t[60000000] = true, grows an array to 60 million slots
// (a gigabyte) inside one instruction. So before compiling an untrusted
// chunk, its syntax tree is rewritten to route those operations through
// guard functions that check and charge the call's memory account before
// the VM allocates (guard.go):
//
//	a .. b .. c      → __karta_concat(a, b, c)
//	t[k] = v         → __karta_set(t, k, v)      (k not a constant string or small integer)
//	{...}            → __karta_table({...}, n)   (n: the constructor's keyed fields)
//	{[k] = v}        → {[__karta_key(k)] = v}    (k not a constant string or small integer)
//	function ... end → __karta_fn(function ... end)   (closures made as values)
//
// Stores with a constant string key (t.name = v) and small constant
// integer keys are left to the VM: each adds at most one slot to a table
// that was charged when it was made. Function statements (function f()
// end, function a.b:c() end) are left too: each execution replaces the
// same slot. The guard functions reach the chunk as locals declared before
// its first statement, so every function of the chunk finds them as
// upvalues.
//
// The rewrite keeps every node's line, so errors point at the script's
// own lines.

// Names of the guard functions, in the sandbox and as chunk locals, and of
// the rewrite's temporaries. They are not Lua identifiers (like the
// compiler's own "(for index)"), so no script can name, shadow or assign
// them; only the rewrite, which builds the syntax tree directly, can.
const (
	guardConcatName = "(karta concat)"
	guardSetName    = "(karta set)"
	guardTableName  = "(karta table)"
	guardFnName     = "(karta closure)"
	guardKeyName    = "(karta key)"
	guardTempPrefix = "(karta temp "
)

var guardNames = []string{guardConcatName, guardSetName, guardTableName, guardFnName, guardKeyName}

// smallIntKey is the largest constant integer key stored without the guard:
// such a store grows an array by at most this many slots.
const smallIntKey = 8

// guardChunk rewrites a parsed chunk in place and returns it with the
// guard locals declared first.
func guardChunk(stmts []ast.Stmt) []ast.Stmt {
	g := &guardRewriter{}
	stmts = g.block(stmts)
	decl := &ast.LocalAssignStmt{Names: append([]string(nil), guardNames...)}
	for _, name := range guardNames {
		decl.Exprs = append(decl.Exprs, &ast.IdentExpr{Value: name})
	}
	return append([]ast.Stmt{decl}, stmts...)
}

type guardRewriter struct {
	temps int // temporaries made so far, for unique names
}

func (g *guardRewriter) block(stmts []ast.Stmt) []ast.Stmt {
	out := make([]ast.Stmt, 0, len(stmts))
	for _, s := range stmts {
		out = append(out, g.stmt(s)...)
	}
	return out
}

// stmt rewrites one statement into one or more.
func (g *guardRewriter) stmt(s ast.Stmt) []ast.Stmt {
	switch st := s.(type) {
	case *ast.AssignStmt:
		return g.assign(st)
	case *ast.LocalAssignStmt:
		// gopher-lua compiles `local f = function ... end` (and `local
		// function f`) with f already in scope in the body, so recursion
		// works; declaring f first keeps that once the function is
		// wrapped in a call.
		if len(st.Names) == 1 && len(st.Exprs) == 1 {
			if fn, ok := st.Exprs[0].(*ast.FunctionExpr); ok {
				decl := &ast.LocalAssignStmt{Names: st.Names}
				decl.SetLine(st.Line())
				target := &ast.IdentExpr{Value: st.Names[0]}
				target.SetLine(st.Line())
				set := &ast.AssignStmt{Lhs: []ast.Expr{target}, Rhs: []ast.Expr{g.expr(fn)}}
				set.SetLine(st.Line())
				set.SetLastLine(st.LastLine())
				return []ast.Stmt{decl, set}
			}
		}
		g.exprs(st.Exprs)
	case *ast.FuncCallStmt:
		st.Expr = g.expr(st.Expr)
	case *ast.DoBlockStmt:
		st.Stmts = g.block(st.Stmts)
	case *ast.WhileStmt:
		st.Condition = g.expr(st.Condition)
		st.Stmts = g.block(st.Stmts)
	case *ast.RepeatStmt:
		st.Condition = g.expr(st.Condition)
		st.Stmts = g.block(st.Stmts)
	case *ast.IfStmt:
		st.Condition = g.expr(st.Condition)
		st.Then = g.block(st.Then)
		st.Else = g.block(st.Else)
	case *ast.NumberForStmt:
		st.Init = g.expr(st.Init)
		st.Limit = g.expr(st.Limit)
		if st.Step != nil {
			st.Step = g.expr(st.Step)
		}
		st.Stmts = g.block(st.Stmts)
	case *ast.GenericForStmt:
		g.exprs(st.Exprs)
		st.Stmts = g.block(st.Stmts)
	case *ast.FuncDefStmt:
		// The statement itself stays (see above); its name's
		// expressions and its body are rewritten.
		if st.Name.Func != nil {
			st.Name.Func = g.expr(st.Name.Func)
		}
		if st.Name.Receiver != nil {
			st.Name.Receiver = g.expr(st.Name.Receiver)
		}
		st.Func.Stmts = g.block(st.Func.Stmts)
	case *ast.ReturnStmt:
		g.exprs(st.Exprs)
	}
	return []ast.Stmt{s}
}

// assign rewrites the guarded stores of an assignment. A single store
// t[k] = v becomes a call, whose arguments are evaluated in the VM's order
// (t, k, v). A multiple assignment keeps its semantics, as gopher-lua
// compiles them: the tables and keys of its targets are evaluated first,
// left to right, then the values (so i, t[i] = i + 1, 20 stores at the old
// i), then the stores happen from the last target to the first.
func (g *guardRewriter) assign(st *ast.AssignStmt) []ast.Stmt {
	guarded := false
	for i, lhs := range st.Lhs {
		if attr, ok := lhs.(*ast.AttrGetExpr); ok {
			attr.Object = g.expr(attr.Object)
			attr.Key = g.expr(attr.Key)
			guarded = guarded || needsCall(attr)
		} else {
			st.Lhs[i] = g.expr(lhs)
		}
	}
	g.exprs(st.Rhs)
	if !guarded {
		return []ast.Stmt{st}
	}
	if len(st.Lhs) == 1 && len(st.Rhs) == 1 {
		attr := st.Lhs[0].(*ast.AttrGetExpr)
		return []ast.Stmt{g.setCall(st, attr, st.Rhs[0])}
	}
	line := st.Line()
	targets := &ast.LocalAssignStmt{}
	targets.SetLine(line)
	hold := func(e ast.Expr) ast.Expr {
		if _, ok := e.(ast.ConstExpr); ok {
			return e
		}
		name := g.temp()
		targets.Names = append(targets.Names, name)
		targets.Exprs = append(targets.Exprs, e)
		return ident(name, line)
	}
	for _, lhs := range st.Lhs {
		if attr, ok := lhs.(*ast.AttrGetExpr); ok {
			attr.Object = hold(attr.Object)
			attr.Key = hold(attr.Key)
		}
	}
	values := &ast.LocalAssignStmt{Exprs: st.Rhs}
	values.SetLine(line)
	for range st.Lhs {
		values.Names = append(values.Names, g.temp())
	}
	body := []ast.Stmt{targets, values}
	for i := len(st.Lhs) - 1; i >= 0; i-- {
		val := ident(values.Names[i], line)
		if attr, ok := st.Lhs[i].(*ast.AttrGetExpr); ok && needsCall(attr) {
			body = append(body, g.setCall(st, attr, val))
			continue
		}
		one := &ast.AssignStmt{Lhs: []ast.Expr{st.Lhs[i]}, Rhs: []ast.Expr{val}}
		one.SetLine(line)
		body = append(body, one)
	}
	if len(targets.Names) == 0 {
		body = body[1:]
	}
	do := &ast.DoBlockStmt{Stmts: body}
	do.SetLine(line)
	do.SetLastLine(st.LastLine())
	return []ast.Stmt{do}
}

// temp names a new temporary.
func (g *guardRewriter) temp() string {
	g.temps++
	return guardTempPrefix + strconv.Itoa(g.temps) + ")"
}

func ident(name string, line int) *ast.IdentExpr {
	id := &ast.IdentExpr{Value: name}
	id.SetLine(line)
	return id
}

// setCall is the statement __karta_set(obj, key, val) for obj[key] = val.
func (g *guardRewriter) setCall(at ast.Stmt, attr *ast.AttrGetExpr, val ast.Expr) ast.Stmt {
	call := guardCall(attr.Line(), guardSetName, attr.Object, attr.Key, val)
	st := &ast.FuncCallStmt{Expr: call}
	st.SetLine(at.Line())
	st.SetLastLine(at.LastLine())
	return st
}

// needsCall reports whether the store obj[key] = v becomes a guardSet
// call: when its key needs the guard, or when obj is a constant
// (("").x = 1), which gopher-lua's compiler stores through a register
// holding some other value — a local table of the caller's, silently
// changed — instead of raising; through the call, the store raises
// "attempt to index a non-table object(string)" as Lua does.
func needsCall(attr *ast.AttrGetExpr) bool {
	if _, ok := attr.Object.(ast.ConstExpr); ok {
		return true
	}
	return needsGuard(attr.Key)
}

// needsGuard reports whether a store with this key can grow a table by
// more than one slot, or adds a slot the table's constructor did not pay
// for: every key but a constant string or a small constant integer.
func needsGuard(key ast.Expr) bool {
	switch k := key.(type) {
	case *ast.StringExpr:
		return false
	case *ast.NumberExpr:
		n, err := strconv.ParseFloat(k.Value, 64)
		return err != nil || n > smallIntKey
	}
	return true
}

func (g *guardRewriter) exprs(es []ast.Expr) {
	for i, e := range es {
		es[i] = g.expr(e)
	}
}

// expr rewrites an expression (and returns its replacement).
func (g *guardRewriter) expr(e ast.Expr) ast.Expr {
	switch ex := e.(type) {
	case *ast.StringConcatOpExpr:
		// a .. b .. c is right-associative: flatten the chain into one
		// call, operands left to right.
		var operands []ast.Expr
		var flatten func(ast.Expr)
		flatten = func(x ast.Expr) {
			if c, ok := x.(*ast.StringConcatOpExpr); ok {
				flatten(c.Lhs)
				flatten(c.Rhs)
				return
			}
			operands = append(operands, g.expr(x))
		}
		flatten(ex)
		return guardCall(ex.Line(), guardConcatName, operands...)
	case *ast.TableExpr:
		keyed := 0
		for _, f := range ex.Fields {
			if f.Key != nil {
				f.Key = g.expr(f.Key)
				if needsGuard(f.Key) {
					f.Key = guardCall(f.Key.Line(), guardKeyName, f.Key)
				}
				keyed++
			}
			f.Value = g.expr(f.Value)
		}
		n := &ast.NumberExpr{Value: strconv.Itoa(keyed)}
		n.SetLine(ex.Line())
		return guardCall(ex.Line(), guardTableName, ex, n)
	case *ast.FunctionExpr:
		ex.Stmts = g.block(ex.Stmts)
		return guardCall(ex.Line(), guardFnName, ex)
	case *ast.AttrGetExpr:
		ex.Object = g.expr(ex.Object)
		ex.Key = g.expr(ex.Key)
	case *ast.FuncCallExpr:
		if ex.Func != nil {
			ex.Func = g.expr(ex.Func)
		}
		if ex.Receiver != nil {
			ex.Receiver = g.expr(ex.Receiver)
		}
		g.exprs(ex.Args)
	case *ast.LogicalOpExpr:
		ex.Lhs, ex.Rhs = g.expr(ex.Lhs), g.expr(ex.Rhs)
	case *ast.RelationalOpExpr:
		ex.Lhs, ex.Rhs = g.expr(ex.Lhs), g.expr(ex.Rhs)
	case *ast.ArithmeticOpExpr:
		ex.Lhs, ex.Rhs = g.expr(ex.Lhs), g.expr(ex.Rhs)
	case *ast.UnaryMinusOpExpr:
		ex.Expr = g.expr(ex.Expr)
	case *ast.UnaryNotOpExpr:
		ex.Expr = g.expr(ex.Expr)
	case *ast.UnaryLenOpExpr:
		ex.Expr = g.expr(ex.Expr)
	}
	return e
}

// guardCall is the expression name(args...) at line. Every guard function
// returns exactly one value, so the call stands for the single value it
// replaces even where a call would expand (last in an argument list, a
// constructor or a return).
func guardCall(line int, name string, args ...ast.Expr) *ast.FuncCallExpr {
	fn := ident(name, line)
	// AdjustRet, as for (f()): the call is one value, and gopher-lua
	// does not mistake it for a multiple-value last field of a table
	// constructor (which it does for any call last in a constructor with
	// positional fields, keyed or not).
	call := &ast.FuncCallExpr{Func: fn, Args: args, AdjustRet: true}
	call.SetLine(line)
	call.SetLastLine(line)
	return call
}
