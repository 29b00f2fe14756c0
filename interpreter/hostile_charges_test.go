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
	{"regex, nested repetition", long + ` | test("(x{1,1000}){1,1000}")`},
	{"regex, nested stars", long + ` | test("((a*)*)*((a*)*)*((a*)*)*b")`},
	{"regex, counted classes", long + ` | [match("[a-z]{1,1000}[0-9]{1,1000}"; "g")] | length`},
	{"regex, program too large", `"a" | test("((((x{1,1000}){1,1000}){1,1000}){1,1000})")`},
	{"regex, gsub", long + ` | gsub("(a{1,100})"; "b")`},
	{"regex, splits", long + ` | [splits("a{1,1000}x")] | length`},
	{"regex, sub", long + ` | sub("(a|aa){1,200}b"; "x")`},
	{"regex, capture", long + ` | capture("(?<x>(a{1,100}){1,100})b")`},
	{"regex, scan", long + ` | [scan("(a{1,100}){1,100}b")] | length`},
	{"big integers, squaring", `100000000000000000000 | ` + strings.Repeat(`. * . | `, 30) + `tostring | length`},
	{"big integers, addition", `100000000000000000000 | ` + strings.Repeat(`(. * .) + . | `, 30) + `length`},
	{"big integers, modulo", `100000000000000000000 | ` + strings.Repeat(`. * . | `, 22) + `. % 7`},
	{"indices of a long string", long + ` | indices(.[0:524288])`},
	{"indices of a long array", long + ` | explode | indices(.[0:400000])`},
	{"index of a long string", long + ` | index(.[1:] + "b")`},
	{"rindex of a long string", long + ` | rindex("b" + .[1:])`},
	{"contains of long arrays", long + ` | explode | contains(.[0:100000] | map(. + 1))`},
	{"contains of deep values", `[` + strings.Repeat(`[.,.,.,.] | `, 8) + `.] | contains([` + strings.Repeat(`[.,.,.,.] | `, 8) + `1])`},
	{"inside", long + ` | explode | [.[0:100000] | map(. + 1)] | inside([` + long + ` | explode])`},
	{"ltrimstr repeated", `reduce (` + times40 + `) as $x ("ab"; . + .) | ltrimstr("a")`},
	{"@base32d", `reduce (` + times40 + `) as $x ("MFRGG==="; . + .) | @base32d`},
	{"tojson of a big integer", `100000000000000000000 | ` + strings.Repeat(`. * . | `, 24) + `tojson`},
	{"getpath of a long path", `getpath(` + long + ` | explode)`},
	{"test with flags", long + ` | test("(a{1,1000}){1,100}b"; "gix")`},
}

func TestHostileJQCharges(t *testing.T) { testHostileJQ(t, hostileJQCharges) }
