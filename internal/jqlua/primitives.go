package jqlua

// Primitives are the functions of the runtime table J that generated
// accessors may call: the one list both runtimes implement, the Go one
// (runtime*.go, registered from this list) and the portable one
// (portable.lua, checked against it by TestRuntimesDefineThePrimitives).
// A primitive added to one runtime only fails at start-up or in that test.
// J also holds the values null and negzero.
var Primitives = []string{
	// values and streams
	"index", "field", "index_opt", "slice", "slice_opt", "each", "each_opt",
	"array", "object", "make_object", "emit", "collect", "try", "error",
	// operators
	"eq", "ne", "lt", "le", "gt", "ge",
	"plus", "minus", "times", "divide", "modulo", "negate", "unary_plus",
	// builtins
	"length", "keys", "has", "to_entries", "add", "tostring", "tonumber", "type",
	"min", "max", "tojson", "join", "split", "startswith", "endswith", "ltrimstr", "rtrimstr",
	"ascii_downcase", "ascii_upcase",
}

// goOnlyPrimitive is the Go runtime's one function outside Primitives: the
// gojq fallback, which a portable unit never emits.
const goOnlyPrimitive = "gojq"
