// Package jqexpr checks jq expressions statically, before any of them runs.
//
// A Karta is data that a cluster administrator (or anyone who can create the
// custom resource) writes, and its jq expressions are executed inside
// controllers and interpreters on every object of the workload kind. Check
// therefore parses and compiles an expression with gojq, so that syntax
// errors and undefined functions or variables surface at validation time
// rather than on the first object, and then walks every node of the syntax
// tree to reject the constructs that have no business in a read-only
// accessor. Each banned family has its own reason:
//
//   - Mutation: del, setpath, delpaths and every assignment operator (=, |=,
//     +=, -=, *=, /=, %=, //=). A Karta expression locates or reads values;
//     writes go through jq path() over assignable expressions (Assignable),
//     where the caller controls and audits what changes.
//   - Unbounded or document-sized work: recursive descent (..), recurse,
//     recurse_down, walk, repeat, range, until, while, limit, paths,
//     leaf_paths, tostream, combinations and recursive defs. These can loop
//     forever, explode combinatorially or visit every node of a large object
//     on every call; an accessor only ever needs a bounded walk along a few
//     known fields. limit exists only to tame such generators; first(f) is
//     the supported way to take one output.
//   - Environment access and side effects: env, $ENV, input, inputs,
//     input_filename, debug, stderr, halt and halt_error. An expression must
//     depend on its input alone: it must not read the host's environment
//     (which may hold secrets), consume other inputs, write to the host's
//     stderr or stop the evaluator out of band.
//   - Nondeterminism: now. The same object must always give the same answer,
//     or status and gang decisions would flap.
//   - Modules: import, include and module directives. Nothing is loadable
//     from a Karta, and the safety walk could not see into a module.
//   - gojq internals: functions whose names start with "_" (such as _range
//     or _modify) that are not defined in the expression itself. gojq
//     exposes its internal helpers to queries; they would bypass the list
//     above.
//
// A banned name is banned even when the expression defines a function of
// that name: telling a harmless shadow from the real thing is not worth the
// risk of getting it wrong.
//
// Assignable answers a separate question, whether an expression can be used
// as a write location.
package jqexpr
