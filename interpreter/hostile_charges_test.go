package interpreter

import (
	"strings"
	"testing"
)

// The jq-charges suite (issue 28): the builtins whose work in Go grows
// faster than their arguments — regular expressions by their compiled
// program times the subject, big-integer arithmetic by digits, indices and
// contains by the product of their operands — each with adversarial
// arguments, under testHostileJQ's checks.

// long is a 1 MiB string built in a few steps.
const long = `("a" * 1048576)`

var hostileJQCharges = []struct{ name, expr string }{
	{"regex, nested repetition", long + ` | test("((a|b|c|d|e|f|g|h|i|j){1,30}){1,30}x")`},
	{"regex, nested stars", long + ` | test("((a*)*)*((a*)*)*((a*)*)*b")`},
	{"regex, counted classes", long + ` | [match("[a-z]{1,1000}[0-9]{1,1000}"; "g")] | length`},
	{"regex, large program on a short subject", `"a" * 20000 | [match("(((a|b|c|d|e|f|g|h|i|j){1,10}){1,10}){1,10}$"; "g")] | length`},
	{"regex, gsub", long + ` | gsub("(a{1,100})"; "b")`},
	{"regex, splits", long + ` | [splits("a{1,1000}x")] | length`},
	{"regex, sub", long + ` | sub("(a|aa){1,200}b"; "x")`},
	{"regex, capture", long + ` | capture("(?<x>(a{1,30}){1,30})b")`},
	{"regex, scan", long + ` | [scan("(a{1,30}){1,30}b")] | length`},
	{"big integers, squaring", `100000000000000000000 | ` + strings.Repeat(`. * . | `, 30) + `tostring | length`},
	{"big integers, addition", `100000000000000000000 | ` + strings.Repeat(`(. * .) + . | `, 30) + `length`},
	{"big integers, modulo", `100000000000000000000 | ` + strings.Repeat(`. * . | `, 22) + `. % 7`},
	{"indices of a long string", long + ` | indices(.[0:524288])`},
	{"indices of a long array", long + ` | explode | indices(.[0:400000])`},
	{"index of a long string", long + ` | index(.[1:] + "b")`},
	{"rindex of a long string", long + ` | rindex("b" + .[1:])`},
	{"contains of long arrays", long + ` | explode | contains(.[0:100000] | map(. + 1))`},
	{"contains of a long array, found last", `(` + long + ` | explode + [98]) | contains("b" * 100000 | explode)`},
	{"contains of deep values", `[` + strings.Repeat(`[.,.,.,.] | `, 8) + `.] | contains(.)`},
	{"inside", long + ` | explode | [.[0:100000] | map(. + 1)] | inside([` + long + ` | explode])`},
	{"ltrimstr repeated", `reduce (` + times40 + `) as $x ("ab"; . + .) | ltrimstr("a")`},
	{"@base32d", `reduce (` + times40 + `) as $x ("MFRGG==="; . + .) | @base32d`},
	{"tojson of a big integer", `100000000000000000000 | ` + strings.Repeat(`. * . | `, 24) + `tojson`},
	{"test with flags", long + ` | test("(a{1,100}){1,10}b"; "gi")`},
}

func TestHostileJQCharges(t *testing.T) { testHostileJQ(t, hostileJQCharges) }
