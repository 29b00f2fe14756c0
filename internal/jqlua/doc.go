// Package jqlua translates jq expressions into Lua accessor functions for
// karta's generated hook chunk, and provides the runtime they call. An
// expression outside the translated subset runs on a gojq program compiled
// once; which path runs is not observable: outputs, their order,
// and error messages are gojq's.
//
// # API
//
//	u := jqlua.NewUnit()
//	ref, err := u.Add(`.spec.replicatedJobs[]?.name`) // "Q[1]"; err: gojq parse/compile error
//	src := jqlua.Prelude + u.Lua() + …                // the chunk; accessors are Q[1], Q[2], …
//	// in each state: fn(jqlua.Runtime(L), jqlua.FallbackValue(L, u.Fallbacks()))
//	outs, err := jqlua.Eval(L, accessor, input)       // err is *jqlua.Error for a jq error
//
// Identical expression texts share one accessor. Unit.Stats counts
// translated and gojq-backed accessors; Unit.Lua is deterministic and
// prints each accessor after its expression (and, for a gojq-backed one,
// the reason) as comments.
//
// # Chunk and calling convention
//
// The chunk begins with Prelude:
//
//	local J, FALLBACK = ...
//	local NULL = J.null
//	local Q = {}
//
// An accessor is called as acc(v, out): it appends every output of the
// expression on input v, in order, to the Lua array out at out[#out + 1]
// (pass an empty table; at most OutputLimit = 10 000 outputs per call, one
// more is the jq error "too many outputs (limit 10000)", on both paths),
// and returns nothing. A jq error is raised as a Lua error whose value is a
// userdata wrapping *Error (tostring gives the message; AsError recovers
// it from a Go error). Lua J.collect(acc, v) returns the outputs as an
// array table; Go Eval does the same.
//
// Values are luaapi JSON values: NULL for null, Lua booleans, numbers and
// strings, luaapi views of Go maps and slices, and marked tables. Numbers
// leave Lua as float64.
//
// # The translated subset
//
// Exactly these constructs are translated (anything else makes the whole
// expression run on gojq):
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
//     `{a: f, "b": f, (f): g, "k\(f)": g, a, "b", "k\(f)"}`;
//   - the builtins empty, error, error(f), not, length, keys, has(f),
//     to_entries, map(f), first(f), last(f), add, tostring, tonumber, type,
//     select(f), min, max, tojson, join(f), split(f) (a plain separator),
//     startswith(f), endswith(f), ltrimstr(f), rtrimstr(f), ascii_downcase,
//     ascii_upcase; and, as gojq defines them in jq (desugar.go), first,
//     last, any, any(f), any(g; f), all (all arities), values, nulls,
//     booleans, numbers, strings, arrays, objects, iterables, scalars.
//
// Runs on gojq: variables and `as` bindings (including `?//`), def,
// reduce, foreach, label/break, `..`, formats (@base64 …), assignments,
// number literals beyond ±2^53, and every other builtin or arity (add(f),
// test, match, splits, sub, limit, sort, isempty, …).
//
// # The portable runtime
//
// Primitives lists the functions of J; the Go runtime registers exactly
// those, and PortableRuntime implements the same list in plain Lua for
// chunks that run without karta's Go side (the Karmada export). A unit
// made by NewPortableUnit translates as any other but has no gojq
// fallback: an expression outside the subset is a *NotPortableError. Its
// chunk begins with PortablePrelude instead of Prelude and takes no
// arguments. Its accessors read constant string keys from the tables
// directly, with J.field (J.index for a string key, without the rest of
// index) for every other case (a unit made by NewCompactPortableUnit, for
// a target that compiles every call, reads with J.field alone), and read a key of the same
// local once while it is in scope; an accessor whose expression has one
// output (Unit.One) returns it when called without an output table. The differential tests run every translated expression on
// both runtimes against gojq, the portable one in a state with Karmada's
// sandbox.
// Expressions whose Lua would exceed gopher-lua's limits (200 locals,
// registers, constants) or 4 000 lines also run on gojq.
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
// first output. try catches errors raised in its body, never those of
// what consumes its outputs; non-jq errors (Lua errors, deadlines) pass
// through. Object iteration, keys and to_entries follow sorted key order;
// comparisons use jq's cross-type order; add, +, -, *, /, % follow gojq on
// every type pair (composite operands and all error messages are computed
// by gojq itself, on converted values).
//
// Numbers are float64 in Lua. karta treats a number as gojq treats an int
// exactly when it is integral, within ±2^53 and not -0 ("int-like"):
// arithmetic on two int-like numbers follows gojq's int rules (0 * -1 is 0),
// all else IEEE rules, and the gojq path receives int-like numbers as Go
// ints, so both paths agree. tostring prints numbers as gojq does (8, 1.5,
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
// #448), so the runtime raises jq errors without that step; a caught jq
// error leaves the closures of generated code and of its callers intact.
//
// # Differences from gojq
//
// Within ±2^53 there is one, about the sign of zero: gojq keeps floats
// apart from ints even when integral, and a float zero can turn into -0
// (`(.x + 0.0) * -1` with .x = 0, or 1.5 - 1.5 negated) where karta, which
// cannot tell an integral float from an int, computes 0. Integers beyond
// ±2^53 are exact in gojq and rounded in Lua, on both karta paths.
// Tables that leave out null members (as user scripts may) read as objects
// without those keys, so has and keys do not see them.
package jqlua
