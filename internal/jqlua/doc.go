// Package jqlua translates jq expressions into Lua accessor functions over
// the portable runtime (portable.lua), the plain Lua the exports ship to
// Karmada's interpreter and Argo CD (package luaexport). Outputs, their
// order, and error messages are gojq's; in process karta evaluates jq in
// Go (packages jqdirect and gojq), and the tests hold this Lua to it.
//
// # API
//
//	u := jqlua.NewPortableUnit()
//	ref, err := u.Add(`.spec.replicatedJobs[]?.name`) // "Q[1]"; err: gojq parse/compile error or *NotPortableError
//	src := jqlua.PortablePrelude + u.Lua() + …        // the chunk; accessors are Q[1], Q[2], …
//
// Identical expression texts share one accessor. Unit.Lua is
// deterministic and prints each accessor after its expression as a
// comment. ShakeChunk and ShakePortable keep of a chunk and of the runtime
// what a rule reaches (the exports' size).
//
// # Chunk and calling convention
//
// The chunk begins with PortablePrelude: the runtime, which declares J
// (the primitives) and JX (its boundary), then
//
//	local NULL = J.null
//	local type = type
//	local Q = {}
//
// An accessor is called as acc(v, out): it appends every output of the
// expression on input v, in order, to the Lua array out at out[#out + 1]
// (pass an empty table; at most OutputLimit = 10 000 outputs per call, one
// more is the jq error "too many outputs (limit 10000)"), and returns
// nothing. One whose expression has exactly one output (Unit.One) returns
// it when called without out. A jq error is raised as a Lua error that
// JX.message reads; J.collect(acc, v) returns the outputs as an array.
//
// Values are the runtime's: J.null for null, Lua booleans, numbers and
// strings, tables made by J.array and J.object (and tables Karmada
// decoded, whose empty ones read as [] or {} as needed).
//
// # The translated subset
//
// Exactly these constructs are translated (anything else makes the whole
// expression a *NotPortableError):
//
//   - identity `.`; `.a`, `."a"`, `.["a"]`, `.[n]` (negative, fractional),
//     `.[a:b]`, `.[a:]`, `.[:b]`, `.[]`, each with or without `?`, with
//     constant or computed keys and bounds (`.[.k]`, `."a\(.b)"`);
//   - `|`, `,`, `//`, parentheses;
//   - literals: null, true, false, numbers within ±2^53 (and floats),
//     strings; string interpolation "…\(f)…" without a format;
//   - `==`, `!=`, `<`, `<=`, `>`, `>=`, `and`, `or`, `+`, `-`, `*`, `/`,
//     `%`, unary `-` and `+`;
//   - `if … then … elif … else … end`, with or without else;
//   - `try f`, `try f catch g`, and `f?` on any term;
//   - array construction `[f]`, `[]`; object construction `{}`,
//     `{a: f, "b": f, (f): g, "k\(f)": g, a, "b", "k\(f)", $x, $x: f}`;
//   - variable binding `f as $x | g` (one plain variable) and `$x`
//     where a binding is in scope;
//   - the builtins empty, error, error(f), not, length, keys, has(f),
//     to_entries, map(f), first(f), last(f), add, tostring, tonumber, type,
//     select(f), min, max, tojson, join(f), split(f) (a plain separator),
//     startswith(f), endswith(f), ltrimstr(f), rtrimstr(f), ascii_downcase,
//     ascii_upcase; and, as gojq defines them in jq (desugar.go), first,
//     last, any, any(f), any(g; f), all (all arities), values, nulls,
//     booleans, numbers, strings, arrays, objects, iterables, scalars.
//
// Not translated: variables no binding of the expression binds ($ENV, a
// Karta's references: the exports put their exportFallbacks in their
// place), destructuring patterns (`as [$a]`, `as {$a}`) and `?//`, def,
// reduce, foreach, label/break, `..`, formats (@base64 …), assignments,
// number literals beyond ±2^53, and every other builtin or arity (add(f),
// test, match, splits, sub, limit, sort, isempty, …).
//
// # The portable runtime
//
// Primitives lists the functions of J the translator may call;
// PortableRuntime implements exactly that list in plain Lua (a test fails
// if one is missing or extra). An expression outside the subset is a
// *NotPortableError: no export can carry it. Accessors read constant
// string keys from the tables directly, with J.field (J.index for a string
// key, without the rest of index) for every other case (a unit made by
// NewCompactPortableUnit, for a target that compiles every call, reads
// with J.field alone), and read a key of the same local once while it is
// in scope; an accessor whose expression has one output (Unit.One) returns
// it when called without an output table. The differential tests run
// every translated expression on the runtime, in a state with Karmada's
// sandbox, against gojq (TestDifferential, FuzzJQ here; FuzzBackends and
// the interpreter's differential tests on the Kartas' own expressions).
// Expressions whose Lua would exceed gopher-lua's limits (200 locals,
// registers, constants) or 4 000 lines are refused too.
//
// # Semantics
//
// The translator follows gojq's compiler node for node, so evaluation
// order and therefore which error wins are gojq's: a binary operator
// evaluates its right operand first, a computed index key comes before the
// indexed term, slice bounds start then end then term, object entries key
// then value in order, `.a[.k]?` evaluates .k on .a (gojq's `?` tries only
// the last suffix, with `.` bound to the prefix's output), string parts
// right to left. `//` yields the truthy outputs of its left side and falls
// back to the right side only when there are none; as in gojq, and unlike
// jq 1.7, an error of the left side propagates. first(f) stops f at its
// first output. `f as $x | g` runs g on the same input once per output
// of f, with $x a Lua local holding it (named after the variable), in
// scope lexically: what consumes g's outputs is generated outside it, so
// a `$x` there reads an outer binding. A helper whose body reads a
// variable takes it as a parameter (first) or is a closure over its local
// (try, whose J.try passes the input alone). try catches errors raised
// in its body, never those of what consumes its outputs; non-jq errors
// (Lua errors, deadlines) pass through. Object iteration, keys and to_entries follow sorted key order;
// comparisons use jq's cross-type order; add, +, -, *, /, % follow gojq on
// every type pair, error messages included.
//
// Numbers are float64 in Lua. karta treats a number as gojq treats an int
// exactly when it is integral, within ±2^53 and not -0 ("int-like"):
// arithmetic on two int-like numbers follows gojq's int rules (0 * -1 is 0),
// all else IEEE rules, as gojq does with the ints and floats karta hands
// it. tostring prints numbers as gojq does (8, 1.5,
// 1e+21). Constant subexpressions are folded by gojq at translation time.
//
// # gopher-lua
//
// gopher-lua pools a function's equal constants, and 0 == -0, so the
// generated code writes -0 as J.negzero. Two open gopher-lua bugs shape it
// too. An if
// on a literal condition inside a generic for is miscompiled (issue #540),
// so a condition known at translation time selects its branch instead of
// being written out. An error caught by pcall closes every open upvalue of
// the state, detaching live closures from the variables they share (issue
// #448): the generated code keeps what a closure shares in a table, so
// that a caught jq error leaves it intact (TestCaughtErrorsKeepCallersClosures).
//
// # Differences from gojq
//
// Within ±2^53 there is one, about the sign of zero: gojq keeps floats
// apart from ints even when integral, and a float zero can turn into -0
// (`(.x + 0.0) * -1` with .x = 0, or 1.5 - 1.5 negated) where karta, which
// cannot tell an integral float from an int, computes 0. Integers beyond
// ±2^53 are exact in gojq and rounded in Lua.
// Tables that leave out null members (as user scripts may) read as objects
// without those keys, so has and keys do not see them.
package jqlua
