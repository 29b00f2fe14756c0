package jqlua

// Primitives are the functions of the runtime table J that generated
// accessors may call: the list portable.lua implements, checked against
// it by TestRuntimeDefinesThePrimitives. J also holds the values null and
// negzero.
var Primitives = []string{
	// values and streams
	"index", "field", "index_opt", "slice", "slice_opt", "each", "each_opt",
	"array", "array_of", "object", "object_of", "make_object", "emit", "one", "collect", "try", "error", "error_string",
	// operators
	"eq", "ne", "lt", "le", "gt", "ge", "cmpn",
	"plus", "plus_string", "plus_arrays", "minus", "times", "divide", "modulo", "negate", "unary_plus",
	// builtins
	"length", "keys", "has", "to_entries", "add", "tostring", "tostring_key", "tonumber", "type",
	"min", "max", "tojson", "join", "split", "startswith", "endswith", "ltrimstr", "rtrimstr",
	"ascii_downcase", "ascii_upcase",
}
