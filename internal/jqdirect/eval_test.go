package jqdirect

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/internal/heapwatch"
	"github.com/kartalua/karta/internal/jqvalue"
	"github.com/kartalua/karta/internal/third_party/gojq"
)

// Direct evaluation must never be observable: where it gives a result,
// gojq gives the same one; where gojq fails, it declines. (Package
// interpreter checks that the hooks give what the Lua path gives.)

// directExprs cover every node of the direct subset and its edges.
var directExprs = []string{
	`.`, `.a`, `.a.b`, `.["a"]`, `."a"`, `.[0]`, `.[-1]`, `.[5]`, `.arr[1]`, `.arr[-1]`, `.arr[9]`,
	`.a[]`, `.a[]?`, `.a[]?.x`, `.a?`, `.a.b?`, `.m[]`, `[.m[]]`, `.a[0].x`, `.s[]?`, `.n.x?`,
	`.a // 1`, `.b // .n`, `(.a, .b) // 3`, `false // null // 2`, `empty // 1`, `.x // "d"`,
	`.a == .b`, `.n != 1`, `.n > 1`, `.n >= 3`, `.n < 1`, `.n <= 1`, `.s < "b"`, `.s == "héllo"`,
	`null < false`, `false < true`, `true < 0`, `0 < ""`, `.a == .a`, `.m == {}`,
	`.n + 1`, `.n - 1`, `.n * 2`, `.n / 2`, `.n / 0`, `null + .n`, `.n + null`, `.s + .s`, `.s + 1`, `-.n`, `-(.n)`,
	`[.a[]?]`, `[]`, `[.a[]? | select(.x == 1)] | length`, `[.a[]? | select(.x > 0)] | length > 0`,
	`length`, `.s | length`, `.m | length`, `.n | length`, `true | length`, `.arr | length`,
	`not`, `.a | not`, `.x | not`, `type`, `[.[] | type]`, `has("a")`, `.arr | has(0)`, `.arr | has(7)`,
	`map(.x)`, `.arr | map(. == null)`, `first(.a[]?)`, `first(empty)`, `first(.n, error("x"))`, `first(empty, .a[]?, .n)`, `first(.b, .n[])`, `first((.a[]? | select(.y)), .s)`, `[first(.a[]?.x, 1)]`,
	`if .n > 1 then "big" elif .n == 1 then "one" else "small" end`, `if .x then 1 end`,
	`.a and .b`, `.a or .b`, `[(true, false) and (true, false)]`, `[(true, false) or (false, true)]`,
	`[(1, 2) + (10, 20)]`, `[(1, 2) * (10, 20)]`, `tostring`, `.n | tostring`, `.m | tostring`, `.s | tostring`,
	`keys`, `.m | keys`, `.arr | keys[]`, `.m // {} | keys[]`, `.zz // {} | keys[]`, `{}`, `[{}]`,
	`.arr[]`, `(.n * 1000000) * 1000000000`, `.big`, `.big + 0`, `.f`, `.f * 2`, `1e3`, `0.5 + .n`,
	`.spec.replicatedJobs[]? | (.replicas // 1) * (.template.spec.parallelism // 1)`,
	`.metadata.labels["training.kubeflow.org/replica-type"]`, `.spec.leaderWorkerTemplate | (.leaderTemplate // .workerTemplate)`,
	// Object construction: pairs first to last, the last varying fastest.
	`{a: 1}`, `{a: .n, "b": .s}`, `{(.s): 1}`, `{a}`, `{"a"}`, `[{a: (1, 2), b: (3, 4)}]`, `[{(.s, "k"): .n}]`,
	`{a: 1, a: 2}`, `{(.n): 1}`, `{"\(.n)": 2}`, `{a: .m} | .a`, `[{a: .arr[]?}]`, `[{a: empty}]`, `{a: .big}`,
	`{if: 1, then: .x}`, `[{r: ., i: (.arr // [] | keys[])} | .r.arr[.i]]`, `{a: .n} | .a + 1`, `{(.arr[]?): 1}`,
	// Constructions read by constant keys only (records).
	`{a: 1, a: 2} | .a`, `{a: .n, b: .s} | [.b, .a, .c]`, `[{a: (1, 2)} | .a]`, `{a: .m} | .a | keys`, `{a: 1} | .a.b?`,
	`{a: 1} | .a.b`, `{a: .arr} | .a[0]`, `{a: 1} | keys`, `{a: 1} | .`, `{a: 1} | select(.a == 1)`, `{a: 1} | .[0]`,
	`{r: {l: {cpu: "1"}, q: [1, 2.5, "x", null]}, k: .n}`, `[{a: 1}, [2, {b: null}]]`, `{a: 1, a: {b: 2}} | .a.b`,
	`[{a: 1}] | .[0].a`, `{a: {b: 1}} + .m`, `[1, 2] + .arr`, `{a: [], b: {}}`, `{a: {b: -1}}`, `{a: (1, 2), b: {c: 3}}`,
	`{a: 1} | if .a then .a end`, `{a: 1} | .["a"]`, `{a: .s} | {b: .a} | .b`, `{a: {b: .n}} | .a`, `{a: 1} | .[.s]`,
	`[{r: ., c: .a[]?} | {x: .c.x, n: .r.n} | "\(.x)-\(.n)"]`, `{a: 1} | (.a, .b) // 3`, `{a: 1} | {} + {b: .a}`,
	// String interpolation: the parts joined by +, queries through tostring.
	`"\(.n)"`, `"x\(.s)y\(.n)z"`, `"\(.a)"`, `["\(1, 2)-\(3, 4)"]`, `"\(null)\(true)"`, `"\(.f)"`, `"\(.big)"`,
	// Computed indexes (the key outermost) and slices (by code point in strings).
	`.arr[.n]`, `.m[.s]`, `.[.s]`, `[.arr[(0, 1)]]`, `[.a[][(0, 1)]?]`, `[.[][("x", "y")]]`, `.a[.n]`, `.arr[-1 - 0]`,
	`[.m[("z", "a")]]`, `.arr[.f]`, `.s[.n]`, `.arr["x"]`, `.m[0 + 0]`, `.m[null]`, `.["\(.s)"]`, `.arr[.arr]`,
	`.arr[1:]`, `.arr[:-1]`, `.arr[1:2]`, `.arr[-2:]`, `.s[1:]`, `.s[:-1]`, `.s[2:4]`, `.u[1:3]`, `.u[-2:]`, `.n[1:]`,
	`.b[1:]`, `.arr[.n:]`, `[.arr[(0, 1):(2, 3)]]`, `.arr[1.5:]`, `.s[10:]`, `.arr[5:1]`, `[.arr[1:][]]`, `.m[1:]`,
	`.arr[:.f]`, `.arr[null:2]`, `.arr["a":]`, `.p | split(".") | .[1:][0]`,
	// Single computed indexes and error (one.go): the key before the base, its type checked when the base gives nothing.
	`.m[.s][.s]`, `.arr[.n][.n]`, `(.a | select(false))["x"]`, `(.a | select(false))[true]`, `(.a | select(false))[.n]`, `.arr[.m]`,
	`if .n == 1 then .s else error("deep \(.n)") end`, `error(empty)`, `{a: .arr[.n], b: .m[.s]} | .a`, `.m[.s | select(. == "zz")]`,
	// % truncates both operands to integers, the sign of the dividend.
	`.n % 2`, `.n % -2`, `-.n % 3`, `.n % 0`, `.f % 1`, `5 % .n`, `.n % 0.5`, `.big % 2`, `.s % 2`, `7.9 % 2.9`, `-7 % -3`,
	// Chains of arithmetic (arith.go): numbers unboxed between operators,
	// anything else through binary; division by zero, % of huge numbers
	// and non-numbers decline.
	`(.n % 4 - .n % 2) / 2`, `.n * 1048576 * 1024 / 3`, `(.n + 1) * (.n - 1)`, `(.n + .f) % 3`, `.n / 0 + 1`, `(.n - .n) / (.n - .n)`,
	`(.big % 2) + 1`, `(.n * .s) + 1`, `(.s + .s) + .s`, `(null + .n) * 2`, `(.n + null) - 1`, `(.arr + .arr) + [1]`,
	`(.m * .m2) + {}`, `(.arr - [1]) - [null]`, `1 + (2 * .n)`, `(.f * 1e308) * 10`, `((.n % 3) % 2) * -1`, `(.a[]? | .x) * 2 + 1`,
	// + on strings, arrays, objects and null; - on arrays.
	`.arr + .arr`, `.m + {b: 1}`, `{} + .m`, `null + .arr`, `.arr + null`, `.m + .arr`, `[1] + [2]`, `.a + .a`,
	`.m + .m2`, `.m2 + .m`, `.objs + .objs | length`, `.arr - [1]`, `.arr - .arr`, `[1, 2, 3, 1] - [1]`, `.arr - 1`,
	`.objs - [{"a": 1}]`, `[.m] - [.m]`, `.arr - null`, `[.s] - [.s, 1]`, `[[1, [2]], 3] - [[1, [2]]]`,
	// Comparisons of arrays and objects, in jq's order.
	`.arr == .arr`, `.arr < [1, 2]`, `.m == .m2`, `.m < .m2`, `[.m, .m2] | .[0] > .[1]`, `[1, [2]] == [1, [2.0]]`,
	`{"a": 1} < {"b": 0}`, `{"a": 1} < {"a": 2}`, `{"a": 1, "b": 0} < {"a": 1}`, `[.s] == ["template"]`,
	// min and max (the first least, the last greatest), add.
	`[.n, 1] | min`, `.arr | min`, `.arr | max`, `[] | min`, `.m | min`, `[.m, .arr, null, "s"] | max`,
	`[[1, 2], [1]] | min`, `[{"a": 1}, {"a": 0, "b": 1}] | max`, `.n | max`, `.objs | max`,
	`.arr | add`, `[.s, .s] | add`, `.m | add`, `[.m, {"q": 1}] | add`, `[[1], [2]] | add`, `[] | add`, `.s | add`,
	`[.arr[] | select(. > 1)] | max`, `[.arr[]] | min`, `[.a[]? | .x] | any`, `[.a[]? | .x] | all`,
	`[.a[]? | .x == 1] | any`, `[.arr[], .s] | length`, `map(.x) | add`, `[.arr[], .m] | add`, `[.objs[]] | add`,
	`[.strs[]] | add | length`, `[.arr[] | . * 2] | max | . + 1`, `[empty] | max`, `[empty] | all`, `[.n] | add`,
	`[null, 1] | add`, `[1, "a"] | add`, `[null] | add`, `.strs | add`, `.objs | add`, `[.m2, .m] | add`,
	// any and all, with and without a condition.
	`.arr | any`, `.arr | all`, `[] | any`, `[] | all`, `.m | any`, `.arr | any(. == 1)`, `.a | any(.x == 2)`,
	`.n | any(. > 1)`, `[.arr[]?] | all(. != null)`, `.m | all(. > 0)`, `.strs | any(. == 1)`, `.strs | all(type == "string")`,
	`[1, "x"] | any(. > 0)`, `[1, "x"] | all(. > 0)`, `.arr | any(.[0])`, `.m | any(empty)`, `.m | all(empty)`,
	// String builtins.
	`.s | startswith("h")`, `.s | endswith("o")`, `.n | startswith("a")`, `.s | startswith(.n)`, `.s | ltrimstr("hé")`,
	`.s | rtrimstr("lo")`, `.n | ltrimstr("x")`, `.s | rtrimstr(1)`, `.s | split("l")`, `.s | split("")`, `"" | split(",")`,
	`.s | split(.n)`, `.p | split(".")`, `.p | split(".")[] | split("[")`, `.arr | join(",")`, `[.s, 1, null, true, 1.5] | join("-")`,
	`.m | join("")`, `.a | join(",")`, `[] | join(",")`, `.arr | join(1)`, `.strs | join(", ")`, `.objs | join(",")`,
	`.s | ascii_downcase`, `.s | ascii_upcase`, `"ABC-déF" | ascii_downcase`, `.n | ascii_downcase`, `.u | ascii_upcase`,
	`.strs | map(startswith("a"))`, `[.s, .u] | map(endswith("c"))`, `.s | [ltrimstr("h", "hé")]`,
	// tonumber: JSON's number syntax, exact.
	`.n | tonumber`, `"42" | tonumber`, `"1.5e3" | tonumber`, `"007" | tonumber`, `"-3" | tonumber`, `"0x10" | tonumber`,
	`" 1" | tonumber`, `"1e400" | tonumber`, `"9007199254740993" | tonumber`, `".5" | tonumber`, `"+1" | tonumber`,
	`"-0" | tonumber`, `"1." | tonumber`, `null | tonumber`, `.s | tonumber`, `.num | tonumber`, `.fl | tonumber`,
	`"1E2" | tonumber`, `"2.50" | tonumber`, `"nan" | tonumber`, `[.arr[] | tostring | tonumber?]`,
	// error declines (its message is the Lua path's), unless it has nothing to raise.
	`error("x")`, `[error(empty)]`, `if .n == 3 then error("e\(.n)") else 1 end`, `error`, `.x // error("no")`,
	// first, not, empty.
	`.arr | first`, `[] | first`, `.m | first`, `first`, `[.arr[] | not]`, `[empty]`,
	// The shapes of the built-ins' paths.
	`.p | [split(".")[] | split("[") | .[0], (.[1:][] | rtrimstr("]") | tonumber)]`,
	`[.parallelism // 1, .completions // .parallelism // 1] | min`, `[(.n // 1), 1] | max`,
	`.spec.replicatedJobs[]? | {r: ., n: .name} | "\(.n)-\(.r.replicas // 1)-"`,
	`((.n + 2) - ((.n + 2) % 3)) / 3`, `(.m // {}) + {statefulset: .s, "notebook-name": .s}`,
	`.m + {}`, `{} + .m`, `.m2 + {}`, `{a: .n, b: .f} + {}`, `{} + {a: .big}`, `{a: .n} + ({} // {})`, `({} + {}) | length`,
	`[.a[]?] | .[0] + {}`, `.objs[0] + {}`,
	// + of a literal, merged or appended directly (addLiteralNode): one output per pair, or binNode's.
	`.m + {a: .n, z: .s}`, `.m + {z: .big}`, `null + {a: .n}`, `.b + {a: 1}`, `.s + {a: 1}`, `.n + {a: 1}`, `.arr + {a: 1}`,
	`[(.m, .m2) + {a: .n}]`, `[.m + {a: (1, 2)}]`, `[.m + {a: empty}]`, `.m + {a: .n, a: .s}`, `.m + {a: .f}`,
	`.arr + [.n]`, `.arr + [.a[]?]`, `null + [.n]`, `.arr + [empty]`, `.s + [1]`, `.m + [1]`, `[(.arr, [0]) + [.n, .s]]`,
	`.arr + [.big]`, `.objs + [{"a": 2}] | length`, `.x + {a: 1}`, `.x + [1]`, `[.a[]? + {k: 1}]`,
	`.spec + {containers: (.spec.containers + [{name: "s", resources: {requests: {cpu: "25m"}}}])}`,
	`[.a[]? | .y // empty] | add`, `.s | .[("\(.s[:1])-" | length):]`,
	// Bindings: the body once per output, the variable in scope there only.
	`.a as $x | $x`, `.arr[]? as $x | [$x, .n]`, `(.n, 1) as $n | $n + 1`, `. as $d | .a[]? | [., $d.n]`,
	`.s as $s | .m as $m | {$s, $m}`, `.n as $x | (.s as $x | $x), $x`, `[.arr[]? as $x | select($x != null) | $x]`,
	`.a as $x | error("e")`, `.zz[] as $x | 1`, `[empty as $x | 1]`, `{a: (.n as $n | $n * 2)} | .a`,
	// A single source bound without a buffer: to a single body, to several outputs, to none.
	`.a.b as $x | .n as $y | [$x, $y]`, `.s as $x | $x.y`, `.n as $x | .arr[]? | [$x, .]`, `(.a // empty) as $x | $x`,
	`(.x | select(. != null)) as $x | $x + 1`, `.n as $x | .s as $x | $x`, `[.arr[]? | . as $v | $v]`,
	// reduce: the state through each output of the source, the update's last output.
	`reduce .arr[] as $x (0; . + 1)`, `reduce .arr[]? as $x ([]; . + [$x])`, `reduce empty as $x (.n; . + 1)`,
	`[reduce (1, 2) as $x ((0, 10); . + $x)]`, `reduce .arr[]? as $x (0; empty)`, `reduce .arr[]? as $x (0; (1, 2))`,
	`reduce .a[]? as $x ({}; . + {($x.x | tostring): $x})`, `reduce .m[]? as $x (.n; . * $x)`, `.n as $x | reduce .arr[]? as $x (0; $x) | [., $x]`,
	`reduce .arr[]? as [$x] (0; .)`, `reduce .zz as $x (.; .)`,
	// Definitions, inlined: $params bound, filter params closures over the caller's scope.
	`def f: .n; f`, `def f(g): [g, g]; f(.s)`, `def f($k): .[$k]; f("n")`, `def f($a; $b): [$a, $b]; [f(1, 2; 3, 4)]`,
	`def f(g): .n as $n | g; .n as $n | f($n + 1)`, `def f: def g: 3; g + 1; f`, `def f: 1; def g: f + 1; def f: 10; g`,
	`def f(g): def h: g; h; f(.s)`, `def keys: 1; keys`, `def f: f; f`, `def f($x): $x | x; f(.s)`,
	`def f($x): . as $y | $x; .n as $y | f($y)`, `def inc(f): f + 1; [.arr[]? | inc(.)]`,
	`def byKey($k; f): reduce (.[1] // [])[] as $x (.[0] // []; ([to_entries[] | select(.value[$k] == $x[$k]) | .key][0]) as $i | if $i == null then . + [$x] else .[:$i] + [[.[$i], $x] | f] + .[$i + 1:] end); [.objs, [{"a": 1, "c": 3}, {"a": 5}]] | byKey("a"; .[0] + .[1])`,
	// to_entries, any/all of a generator, * on objects.
	`to_entries`, `.m | to_entries`, `.arr | to_entries`, `.n | to_entries`, `[.a[]? | to_entries[] | .key]`,
	`any(.arr[]?; . == 1)`, `all(.arr[]?; . != null)`, `any(empty; .)`, `all(empty; .)`, `any(.a[]?; .x > 1, .x < 0)`,
	`any(.arr[]?; error("x"))`, `[any((1, 2); . == (2, 3))]`, `all(.m[]?; type == "number")`,
	`.m * .m2`, `.m2 * .m`, `{a: {b: 1, c: 2}} * {a: {b: 3}, d: 4}`, `.m * {}`, `{} * .m`, `.m * 2`, `.m * null`,
	`{a: .m} * {a: .m2}`, `{a: 1} * {a: {b: 2}}`, `{a: {b: 2}} * {a: 1}`, `.objs[0] * .objs[1]`, `{a: .big} * {}`,
	// split | .[K] (split_index.go): a piece, past either end, no
	// separator, an empty input or separator, a non-string input.
	`.s | split("l") | .[0]`, `.s | split("l") | .[1]`, `.s | split("l") | .[-1]`, `.s | split("l") | .[7]`,
	`.s | split("l") | .[-9]`, `.s | split("x") | .[0]`, `.s | split("x") | .[-1]`, `.s | split("x") | .[1]`,
	`.s | split("") | .[2]`, `.u | split("ñ") | .[-1]`, `.p | split(".") | .[-2]`, `.n | split(",") | .[0]`,
	`.p | split(".") | .[1]?`, `[.strs[]? | split("a") | .[0]]`,
	// Compared constant arrays (constant_operands.go), and a slice's empty
	// array.
	`.p | split(".") == ["template", "spec", "replicaSpecs[0]", "template"]`, `[] == .arr`, `.arr < [1, "x", null]`,
	`[1, 2.0] == [1, 2]`, `.arr != [true, false, null]`, `["a", [1]] == .x`, `[.arr[1:][1:][]?]`, `.arr[5:] == []`,
	// Interpolations joined in one string (interpolation.go), a generator's
	// part and a composite's.
	`"\(.m)-\(.s)"`, `["\(.arr[]?)-\(.n)"]`, `"\(.s)\(.s)\(.s)\(.s)"`, `"-\(.n)-\(.x // "d")-"`,
	// Arrays read once (array_fusions.go).
	`[.a[]?][0]`, `[.arr[]?][-1]`, `[.arr[]?] | .[1]`, `[.arr[]?][7]`, `.arr - [.n]`, `.arr - [1] | length`,
	`(.arr - [null] | length) < (.arr | length)`, `.a - [.a[0]?] | length`, `.s - [.s] | length`,
	// Records through select (keyedOnly), and where they must not be.
	`[{n: .s, g: .a[]?} | select(.g.x > 1) | .g.y]`, `{n: .n} | select(.n != null)`, `[{a: .n} | select(.a != null) | .a]`,
	`[{a: .n, b: .arr} | select((.b - [.a] | length) < (.b | length)) | .a]`, `{a: .n} | select(.a) | .`,
	`[{a: .s, i: .n} | select(.i != null) | "\(.a)-\(.i)"]`, `[{a: .arr} | select(.a != null) | [.a[]?][0]]`,
	`[{a: .arr, i: .n} | .a as $x | .i | [., $x]]`, `{a: .n} | .a as $x | [$x, .]`, `{a: .n} | .a as $x | .a + $x`,
	`[{c: .m, s: ["x", "a", "y"]} | .s as $s | .c | if ($s | length) > 1 then .[$s[1]] else . end]`,
	// Outside the subset: never compiled, so always the Lua path.
	`test("a")`, `..`, `{$__loc__}`, `.arr[1:]?`, `@base64 "\(.s)"`,
}

// directInputs are JSON texts decoded three ways: float64, json.Number and
// the int64 of client-go's unstructured.
var directInputs = []string{
	`{"a": [{"x": 1}, {"x": 2, "y": "s"}], "b": null, "n": 3, "s": "héllo", "m": {"z": 1, "a": 2}, "arr": [1, null, "x"], "x": false, "big": 9007199254740993, "f": 1.5}`,
	`{"a": "str", "n": 1.5, "s": "a", "m": {}, "arr": [], "x": true, "f": -0.25}`,
	`{"a": {"b": 1, "x": 4}, "n": 0, "arr": [[1], {"k": "v"}]}`,
	`{"a": [], "n": -2, "s": ""}`,
	`{"a": [1, 2], "n": null}`,
	`{"spec": {"replicatedJobs": [{"name": "w", "replicas": 2, "template": {"spec": {"parallelism": 4}}}, {"name": "d"}]}}`,
	`{"spec": {"replicatedJobs": "oops", "leaderWorkerTemplate": {"workerTemplate": {"spec": {}}}}, "metadata": {"labels": {"training.kubeflow.org/replica-type": "worker"}}}`,
	`{"spec": {"replicatedJobs": [{"replicas": "2"}], "leaderWorkerTemplate": {"leaderTemplate": false, "workerTemplate": 3}}, "metadata": {"labels": null}}`,
	`{"s": "héllo", "u": "añb€c", "p": "template.spec.replicaSpecs[0].template", "num": "42", "fl": "1.5e3", "n": 7, "f": 2.5, "arr": [3, 1, 2, 1, "1"], "m": {"x": 1, "y": [2]}, "m2": {"x": 1, "y": [1, 3]}, "objs": [{"a": 1}, {"a": 1, "b": 2}], "strs": ["a", "b", null, 1, true, 2.5], "a": [{"x": 2, "y": [1]}, {"x": 3, "y": [2]}], "big": 9007199254740993, "parallelism": 4, "completions": 2}`,
	`{"s": "", "u": "€", "p": "template", "n": -7, "f": -0.5, "arr": [[1], [0, 5]], "m": {}, "m2": {"a": null}, "objs": [], "strs": [], "a": {"k": {"x": 2}}, "completions": 3}`,
	`{"s": "a.b[1]", "n": 0, "arr": [true, false, null], "m": {"a": true}, "strs": ["a"], "a": [[1, 2], [3]], "parallelism": null}`,
	`null`, `"text"`, `7`, `[1, "a", null, {"x": 2}]`, `true`, `{}`, `[[1, 2], [3, 4]]`, `[{"x": 1, "y": 2}, {"x": "s"}]`,
}

func decodeThreeWays(t testing.TB, text string) map[string]any {
	t.Helper()
	out := map[string]any{}
	var f any
	require.NoError(t, json.Unmarshal([]byte(text), &f))
	out["float64"] = f
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.UseNumber()
	var n any
	require.NoError(t, dec.Decode(&n))
	out["json.Number"] = n
	if strings.HasPrefix(text, "{") {
		u := &unstructured.Unstructured{}
		require.NoError(t, u.UnmarshalJSON([]byte(`{"apiVersion": "v1", "kind": "X", "x_": `+text+`}`)))
		out["int64"] = u.Object["x_"]
	}
	return out
}

func TestAgreesWithGojq(t *testing.T) {
	compiled, agreed, declined := 0, 0, 0
	for _, expr := range directExprs {
		q, err := gojq.Parse(expr)
		require.NoError(t, err, expr)
		d := Compile(q)
		if d == nil {
			continue
		}
		compiled++
		a, n := agreeOnInputs(t, q, d)
		agreed, declined = agreed+a, declined+n
	}
	for _, expr := range []string{`. as [$x] | $x`, `def f: f; f`, `reduce .arr[]? as [$x] (0; .)`, `..`, `keys(.)`, `{$__loc__}`, `.arr[1:]?`, `@base64 "\(.s)"`, `split("a"; "g")`} {
		q, err := gojq.Parse(expr)
		require.NoError(t, err)
		assert.Nil(t, Compile(q), "%s is outside the direct subset", expr)
	}
	assert.Greater(t, compiled, 90)
	assert.Greater(t, agreed, 1500, "most evaluations are direct")
	assert.Greater(t, declined, 200, "the error cases decline")
}

// agreeOnInputs runs d and gojq on every input of directInputs (in each
// of its decodings) and requires the same outputs wherever d gives any:
// how many runs agreed and how many d declined.
func agreeOnInputs(t *testing.T, q *gojq.Query, d *Program) (agreed, declined int) {
	t.Helper()
	expr := q.String()
	ref, err := gojq.Compile(q)
	require.NoError(t, err, expr)
	for _, text := range directInputs {
		for form, in := range decodeThreeWays(t, text) {
			var s Scratch
			got, ok := d.Run(in, &s)
			s.Release()
			want, wantErr := gojqOutputs(ref, in)
			if !ok {
				declined++
				continue
			}
			require.NoError(t, wantErr, "jq %s on %s (%s): direct evaluation gave %v where gojq fails", expr, text, form, got)
			assert.Equal(t, normalJSON(t, want), normalJSON(t, got), "jq %s on %s (%s)", expr, text, form)
			assertLuaNumbers(t, got, expr)
			agreed++
		}
	}
	return agreed, declined
}

// varExprs read the variables a Karta's references bind: $rs (a list:
// objects, or absent []), $rt (a lookup: an object, or absent null) and
// $pad, which the calls bind no value for (null, as gojq pads them).
var varExprs = []string{
	`reduce $rs[] as $x (0; . + 1)`, `def f($a): $a; f($rs)`, `def f($rt): $rt; f($rs)`, `def f(g): $rt | g; f($rs)`,
	`reduce $rs[]? as $r ({}; . + {($r.metadata.name // "x"): ($rt.spec // null)})`,
	`$rs`, `$rt`, `$pad`, `$rs[]`, `$rs[]?`, `$rs[0]`, `$rs[]?.status.replicas`, `$rs | length`, `$rt.spec`, `$rt.spec?`,
	`[$rs[] | .status.conditions[]? | select(.type == "ReplicaFailure" and .status == "True")] | length != 0`,
	`{$rs}`, `{$rs} | .rs`, `{a: $rs, b: .n} | .a[0]`, `{$rt, $rs} | keys`, `($rt // $rs)`, `($rt // {}).spec.x`,
	`$rt.spec.template.spec.replicatedJobs[]?.name`, `[$rs[] | .status.replicas] | add`, `$rs[] | . == $rs[0]`,
	`.n + ($rs | length)`, `"\($rs | length)-\($rt.spec.n)"`, `$rs | map(.metadata.name)`, `.arr[$rs | length]`,
	`[.a[]? | $rt]`, `if $rt then $rt.spec else .n end`, `$rs[] | select(.metadata.name == $rt.metadata.name)`,
	`[$rs[], .n]`, `$pad // $rt // 1`, `. as $rs | $rs.n`, `$rs[] as $r | $r.metadata.name`, `$rt as $x | $x.spec.n`,
	`($rt // $rs) as $rt | $rt.spec? // "none"`, `.n as $pad | [$pad, $rs[0]?.status.replicas]`, `$rs as $x | $rs | length`, `$rs + $rs | length`, `{($rt.metadata.name // "k"): $rs[0]}`, `$rt[]`, `$rt.x.y`,
	`(.status.active | length) == 0 and ({since: (.status.lastSuccessfulTime // ""), failed: [$rs[] | select([.status.conditions[]? | select(.type == "Failed" and .status == "True")] | length != 0) | .metadata.creationTimestamp // ""]} | [.failed[] > .since | select(.)] | length != 0)`,
}

// varValues are the values bound to $rs and $rt, in JSON: what resolved
// references hold, absent ones, and values of the wrong type.
var varValues = [][2]string{
	{`[{"metadata": {"name": "a", "creationTimestamp": "2026-01-02T00:00:00Z"}, "status": {"replicas": 2, "conditions": [{"type": "ReplicaFailure", "status": "True"}, {"type": "Failed", "status": "True"}]}}, {"metadata": {"name": "b"}, "status": {"replicas": 1.5}}]`,
		`{"metadata": {"name": "b"}, "spec": {"n": 3, "template": {"spec": {"replicatedJobs": [{"name": "node"}, {"name": "init"}]}}}}`},
	{`[]`, `null`},
	{`[{"status": {"conditions": "x"}}]`, `{"spec": 1}`},
	{`"str"`, `[1, 2]`},
	{`[1, null, "x"]`, `7`},
}

// TestVariablesAgreeWithGojq: an expression that reads the variables the
// caller binds (or shadows them with `as`) runs directly, with their
// values, and agrees with gojq run with the same values; a variable it is
// not compiled with or a pattern is outside the subset.
func TestVariablesAgreeWithGojq(t *testing.T) {
	vars := []string{"$rs", "$rt", "$pad"}
	agreed, declined := 0, 0
	for _, expr := range varExprs {
		q, err := gojq.Parse(expr)
		require.NoError(t, err, expr)
		d := Compile(q, vars...)
		require.NotNil(t, d, "%s is in the direct subset", expr)
		if !strings.Contains(expr, " as $") {
			assert.Nil(t, Compile(q), "%s reads a variable it is not compiled with", expr)
		}
		ref, err := gojq.Compile(q, gojq.WithVariables(vars))
		require.NoError(t, err, expr)
		for _, vv := range varValues {
			for form, rs := range boundForms(t, vv[0]) {
				rt := decodeThreeWays(t, vv[1])["float64"]
				for _, text := range directInputs {
					in, found := decodeThreeWays(t, text)[form]
					if !found {
						in = decodeThreeWays(t, text)["float64"]
					}
					// Two values bound, $pad not: null.
					s := Scratch{Vars: []any{rs, rt}}
					got, ok := d.Run(in, &s)
					s.Release()
					if !ok {
						declined++
						continue
					}
					want, wantErr := gojqOutputs(ref, in, rs, rt, nil)
					require.NoError(t, wantErr, "jq %s on %s with $rs %s, $rt %s (%s): direct evaluation gave %v where gojq fails", expr, text, vv[0], vv[1], form, got)
					assert.Equal(t, normalJSON(t, want), normalJSON(t, got), "jq %s on %s with $rs %s, $rt %s (%s)", expr, text, vv[0], vv[1], form)
					assertLuaNumbers(t, got, expr)
					agreed++
				}
			}
		}
	}
	assert.Greater(t, agreed, 3000, "most evaluations are direct")
	assert.Greater(t, declined, 100, "the error cases decline")
	for _, expr := range []string{`$other`, `(. as $x | $x) | $x`, `. as [$x] | $x`, `. as {a: $x} | $x`, `. as [$x] ?// $x | $x`,
		`reduce $rs[] as [$x] (0; . + 1)`, `def f($a): $a; f($other)`, `def f: $x; 1 as $x | f`, `{$__loc__}`, `$__loc__`, `{$other}`, `$rs | $ENV`} {
		q, err := gojq.Parse(expr)
		require.NoError(t, err)
		assert.Nil(t, Compile(q, vars...), "%s is outside the direct subset", expr)
	}
}

// boundForms are the JSON text decoded as decodeThreeWays decodes it,
// whatever its type, and as the hooks bind a resolved reference: client-go's
// int64 through jqvalue.Input, gojq's int.
func boundForms(t *testing.T, text string) map[string]any {
	t.Helper()
	forms := decodeThreeWays(t, text)
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON([]byte(`{"apiVersion": "v1", "kind": "X", "x_": `+text+`}`)))
	forms["int64"] = u.Object["x_"]
	forms["int"] = jqvalue.Input(u.Object["x_"])
	return forms
}

// TestVariablesArePerScratch: the same program run with different values
// gives each run's own answer, and a released Scratch keeps no value.
func TestVariablesArePerScratch(t *testing.T) {
	q, err := gojq.Parse(`[$rs[] | .name]`)
	require.NoError(t, err)
	p := Compile(q, "$rs")
	require.NotNil(t, p)
	for _, tc := range []struct {
		vars []any
		want []any
	}{
		{[]any{[]any{map[string]any{"name": "a"}}}, []any{[]any{"a"}}},
		{[]any{[]any{}}, []any{[]any{}}},
		{[]any{[]any{map[string]any{"name": "b"}, map[string]any{"name": "c"}}}, []any{[]any{"b", "c"}}},
	} {
		s := Scratch{Vars: tc.vars}
		got, ok := p.Run(nil, &s)
		require.True(t, ok)
		assert.Equal(t, tc.want, got)
		c := s.c
		s.Release()
		assert.Nil(t, c.vars, "a pooled context keeps no value")
	}
	// Unbound ($rs null): iterating null is jq's error, which declines.
	var s Scratch
	_, ok := p.Run(nil, &s)
	s.Release()
	assert.False(t, ok)
	// The expression's own bindings live in the run's environment, which
	// is cleared after it; the caller's values are left as they were.
	q, err = gojq.Parse(`$rs[] as $r | . as $rs | [$r.name, $rs.k]`)
	require.NoError(t, err)
	p = Compile(q, "$rs")
	require.NotNil(t, p)
	vars := []any{[]any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}}
	s = Scratch{Vars: vars}
	got, ok := p.Run(map[string]any{"k": "v"}, &s)
	require.True(t, ok)
	assert.Equal(t, []any{[]any{"a", "v"}, []any{"b", "v"}}, got)
	assert.Equal(t, []any{[]any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}}, vars)
	for _, v := range s.c.env {
		assert.Nil(t, v, "a finished run's environment holds no value")
	}
	s.Release()
}

// assertLuaNumbers checks that outputs carry numbers as FromLua does:
// int64 for integral values within ±2^53, float64 otherwise.
func assertLuaNumbers(t *testing.T, outs []any, expr string) {
	t.Helper()
	for _, v := range outs {
		switch x := v.(type) {
		case float64:
			assert.False(t, x == float64(int64(x)) && x <= maxExactFloat && x >= -maxExactFloat, "jq %s: integral %v must be an int64", expr, x)
		case int, int32, float32, json.Number:
			assert.Failf(t, "not a Lua number", "jq %s: %T %v", expr, v, v)
		case []any:
			// Built arrays hold converted numbers; the object's own arrays
			// are the object's values.
		}
	}
}

// TestWorkIsBounded: an expression whose work explodes on a hostile
// object declines after directStepBudget steps (the caller's Lua path then
// ends the call with its instruction limit).
func TestWorkIsBounded(t *testing.T) {
	xs := make([]any, 3000)
	for i := range xs {
		xs[i] = int64(i)
	}
	for _, tc := range []struct {
		expr string
		obj  map[string]any
		ok   bool
	}{
		{`[(.x[]) + (.x[])] | length`, map[string]any{"x": xs}, false},
		{`[(.x[]) + (.x[])] | length`, map[string]any{"x": xs[:100]}, true},
		{`[.x[] | .y[] | .z[]] | length`, map[string]any{"x": []any{map[string]any{"y": []any{map[string]any{"z": xs}}}}}, true},
		// The new constructs' work: array subtraction per pair, object
		// construction per combination, comparisons per element, string
		// making per byte.
		{`.x - .x | length`, map[string]any{"x": xs}, false},
		{`.x - .x | length`, map[string]any{"x": xs[:300]}, true},
		{`[{a: .x[], b: .x[]}] | length`, map[string]any{"x": xs}, false},
		{`[.y[] | . == .] | length`, map[string]any{"y": []any{xs, xs, xs, xs, xs, xs, xs, xs, xs, xs}}, true},
		{`[.y[] | . == .] | length`, map[string]any{"y": slices.Repeat([]any{xs}, 400)}, false},
		{`[.s | split("")[]] | length`, map[string]any{"s": strings.Repeat("ab", 1<<20)}, false},
		{`[.x[] | tostring] | join(",") | length`, map[string]any{"x": xs}, true},
		// What the call builds: a thousand arrays of a thousand are
		// within the steps (10^3 + 10^6) and the outputs, not within
		// directByteBudget.
		{`[.x[] as $a | [.x[]]] | length`, map[string]any{"x": xs[:1000]}, false},
		{`[.x[] as $a | [.x[]]] | length`, map[string]any{"x": xs[:100]}, true},
		{`[.x[] as $a | {a: [.x[]]}] | length`, map[string]any{"x": xs[:1000]}, false},
		{`[.x[] as $a | .x | map(tostring) | join(",")] | length`, map[string]any{"x": xs[:1000]}, false},
	} {
		q, err := gojq.Parse(tc.expr)
		require.NoError(t, err)
		d := Compile(q)
		require.NotNil(t, d, tc.expr)
		var s Scratch
		_, ok := d.Run(tc.obj, &s)
		s.Release()
		assert.Equal(t, tc.ok, ok, tc.expr)
	}
}

// TestMemoryIsBounded: a cartesian product of pairs declines within a
// small multiple of directByteBudget of live heap: the direct path runs
// outside the call's memory guard, and a declined call runs again under it.
func TestMemoryIsBounded(t *testing.T) {
	xs := make([]any, 1000)
	for i := range xs {
		xs[i] = int64(i)
	}
	q, err := gojq.Parse(`[.[] as $a | [.[]]]`)
	require.NoError(t, err)
	d := Compile(q)
	require.NotNil(t, d)
	var ok bool
	cost := heapwatch.Measure(func() {
		var s Scratch
		_, ok = d.Run(xs, &s)
		s.Release()
	})
	assert.False(t, ok)
	// Unbounded, it builds 16 MB.
	assert.Less(t, cost.Growth, uint64(12<<20), "heap growth while it ran")
}

// TestBuffersKeepNothing: the pooled buffers are cleared when freed,
// grown ones included, so that a pool never keeps an object alive.
func TestBuffersKeepNothing(t *testing.T) {
	obj := map[string]any{"a": []any{}}
	for i := range 100 {
		obj["a"] = append(obj["a"].([]any), map[string]any{"x": int64(i), "big": strings.Repeat("x", 1000)})
	}
	for _, expr := range []string{`[.a[] | select(.x > 3) | .big] | length`, `.a[]?.x // 1`, `[(.a[].x) + (.a[0].x)] | length > 0`} {
		q, err := gojq.Parse(expr)
		require.NoError(t, err)
		d := Compile(q)
		require.NotNil(t, d)
		s := Scratch{c: &dctx{}}
		outs, ok := d.Run(obj, &s)
		require.True(t, ok, expr)
		require.NotEmpty(t, outs)
		assert.Zero(t, s.c.top, "every buffer was given back")
		for _, b := range s.c.bufs {
			for _, v := range b[:cap(b)] {
				assert.Nil(t, v, "%s: a freed buffer holds a value", expr)
			}
		}
	}
}

// gojqOutputs runs code on in, with vars bound, as the gojq back end
// does: every output, or the first error.
func gojqOutputs(code *gojq.Code, in any, vars ...any) ([]any, error) {
	var outs []any
	gv := make([]any, len(vars))
	for i, v := range vars {
		gv[i] = jqvalue.Input(v)
	}
	iter := code.Run(jqvalue.Input(in), gv...)
	for {
		v, ok := iter.Next()
		if !ok {
			return outs, nil
		}
		if err, ok := v.(error); ok {
			return nil, err
		}
		outs = append(outs, v)
	}
}

// normalJSON is outs as JSON decodes it, so that number types compare.
func normalJSON(t testing.TB, outs []any) any {
	t.Helper()
	if len(outs) == 0 {
		return []any{}
	}
	b, err := gojq.Marshal(jqvalue.Input(outs))
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	return v
}

// compiledPipe compiles expr, a pipe, directly.
func compiledPipe(t *testing.T, expr string) (*gojq.Query, *Program, *pipeNode) {
	t.Helper()
	q, err := gojq.Parse(expr)
	require.NoError(t, err)
	d := Compile(q)
	require.NotNil(t, d, expr)
	pipe, ok := d.root.(*pipeNode)
	require.True(t, ok, expr)
	return q, d, pipe
}

// TestRecords: an object construction piped into an expression that reads
// only constant keys of it builds a record instead of a map; any other
// use of it (whole, by a computed key, through a builtin) keeps the map.
func TestRecords(t *testing.T) {
	for _, tc := range []struct {
		expr   string
		record bool
	}{
		{`{r: ., i: 1} | .r.a[.i]`, true},
		{`{a: .x, b: 1} | if .a == 1 then "\(.b)" else [.a, .b] end`, true},
		{`{a: .x} | {b: .a} | .b`, true},
		{`{a: .x} | .a, (.b | length)`, true},
		{`{a: .x} | keys`, false},
		{`{a: .x} | select(.a == 1)`, false},
		{`{a: .x} | .`, false},
		{`{a: .x} | .[.k]`, false},
		{`{a: .x} | if .a then 2 end`, false},
		{`{(.k): 1} | .a`, false},
		{`{a: .x} | .[]`, false},
	} {
		_, _, pipe := compiledPipe(t, tc.expr)
		obj, ok := pipe.l.(*objectNode)
		require.True(t, ok, tc.expr)
		assert.Equal(t, tc.record, obj.asRecord, tc.expr)
	}
}

// TestRecordsThroughBranches: the constructions among the outputs of an
// if, a //, a comma or a pipe's right side build records when what reads
// them reads only keys (Spark's memory strings: an if whose branches each
// build {n: …, m: …}), every one of them, and none when the reader needs
// the object; the outputs are gojq's either way.
func TestRecordsThroughBranches(t *testing.T) {
	for _, tc := range []struct {
		expr   string
		record bool
	}{
		{`(.s | if endswith("o") then {n: .[:-1], m: 2} elif endswith("x") then {n: ., m: 3} else {n: "", m: 0} end) | select(.n != "") | .n + "\(.m)"`, true},
		{`(if .n > 1 then {a: .n} else {a: .m} end) | .a`, true},
		{`(if .n > 1 then {a: .n} else .m end) | .a`, true},
		{`({a: .x} // {a: 2}) | .a`, true},
		{`({a: 1}, {a: .s}, .m) | .a`, true},
		{`(.n | {a: .}, {a: 2}) | [.a]`, true},
		{`(.m | .n | {a: .}) | .a`, true},
		{`(if .n > 1 then {a: .n} else {a: .m} end) | .`, false},
		{`({a: .x} // {a: 2}) | keys`, false},
		{`({a: 1}, {a: .s}) | .[.s]`, false},
		{`(if .n > 1 then {(.s): .n} else {a: .m} end) | .a`, true},
	} {
		q, d, pipe := compiledPipe(t, tc.expr)
		var objs []*objectNode
		var collect func(n dnode)
		collect = func(n dnode) {
			switch x := n.(type) {
			case *objectNode:
				objs = append(objs, x)
			case *ifNode:
				collect(x.els)
				for _, b := range x.thens {
					collect(b)
				}
			case *altNode:
				collect(x.l)
				collect(x.r)
			case *commaNode:
				collect(x.l)
				collect(x.r)
			case *pipeNode:
				collect(x.r)
			}
		}
		collect(pipe.l)
		require.NotEmpty(t, objs, tc.expr)
		for _, o := range objs {
			assert.Equal(t, tc.record && o.constKeys(), o.asRecord, tc.expr)
		}
		agreeOnInputs(t, q, d)
	}
}

// `[q] | f` for the builtins that only read the array gathers it in a
// scratch buffer: counting matching conditions allocates nothing.
func TestArrayIntoBuiltinBuildsNoArray(t *testing.T) {
	in := map[string]any{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "Created", "status": "True"},
		map[string]any{"type": "Running", "status": "True"},
		map[string]any{"type": "Failed", "status": "False"},
	}}}
	for expr, want := range map[string]any{
		`[.status.conditions[]? | select(.status == "True" and .type != "Created")] | length`: int64(1),
		`[.status.conditions[] | .type] | max`:                                                "Running",
		`[.status.conditions[] | .status == "True"] | any`:                                    true,
	} {
		t.Run(expr, func(t *testing.T) {
			q, err := gojq.Parse(expr)
			require.NoError(t, err)
			p := Compile(q)
			require.NotNil(t, p)
			_, fused := p.root.(*arrayFnNode)
			require.True(t, fused, "%T", p.root)
			var s Scratch
			got, ok := p.Run(in, &s)
			s.Release()
			require.True(t, ok)
			assert.Equal(t, []any{want}, got)
			// One Scratch, held across the runs and big enough for
			// their results: no pool is touched after the first run
			// (the race detector's sync.Pool drops items at random),
			// so every allocation counted is the evaluation's own.
			s = Scratch{Size: 1024}
			defer s.Release()
			assert.Zero(t, testing.AllocsPerRun(100, func() { p.Run(in, &s) }))
		})
	}
}

// The fork's compiler no longer miscompiles an if of two constant
// results piped into a constant inside a construction (upstream gojq
// v0.12.20 fails these with "expected a string for object key"); jq's
// answers, and the direct evaluator's.
func TestIfOfConstantsInConstruction(t *testing.T) {
	in := map[string]any{"n": 1.0}
	for expr, want := range map[string]any{
		`{k: ((if . then 1 else 2 end) | 0)}`:          map[string]any{"k": 0},
		`{k: (if .n then 1 else 2 end | 0), j: 3}`:     map[string]any{"k": 0, "j": 3},
		`{("k"): (if .x then "a" else "b" end | "c")}`: map[string]any{"k": "c"},
		`[{k: (if .x then 1 else 2 end | . + 1)}]`:     []any{map[string]any{"k": 3}},
	} {
		t.Run(expr, func(t *testing.T) {
			q, err := gojq.Parse(expr)
			require.NoError(t, err)
			code, err := gojq.Compile(q)
			require.NoError(t, err)
			got, err := gojqOutputs(code, in)
			require.NoError(t, err)
			assert.Equal(t, normalJSON(t, []any{want}), normalJSON(t, got))
			p := Compile(q)
			require.NotNil(t, p)
			var s Scratch
			out, ok := p.Run(in, &s)
			s.Release()
			require.True(t, ok)
			assert.Equal(t, normalJSON(t, []any{want}), normalJSON(t, out))
		})
	}
}

// runSpending runs p on in with vars bound and returns its outputs,
// whether it ran, and the steps and bytes it charged: what the agreement
// tests compare between a program and its rewritten form.
func runSpending(p *Program, in any, vars []any) ([]any, bool, int, int) {
	s := Scratch{Vars: vars}
	outs, ok := p.Run(in, &s)
	steps, bytes := s.Spent()
	s.Release()
	return outs, ok, steps, bytes
}
