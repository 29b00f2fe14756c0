package jqlua

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// specSeeds are the jq expressions of the built-in Kartas (and `.x // 1`),
// each with the Kubernetes objects it is written for and one it is not.
var specSeeds = []struct {
	expr    string
	objects []string // testdata/objects/<name>.json
}{
	{`.spec.replicatedJobs[]?.name`, []string{"jobset", "jobset-minimal", "pytorchjob"}},
	{`.spec.replicatedJobs[]?.template.spec.template`, []string{"jobset", "jobset-minimal"}},
	{`(.replicas // 1) * (.template.spec.parallelism // 1)`, []string{"replicatedjob", "jobset", "workergroup"}},
	{`[.status.conditions[]? | select(.status == "True" and .type != "Created")] | length`, []string{"pytorchjob", "pytorchjob-created", "jobset-minimal"}},
	{`.spec.pytorchReplicaSpecs.Worker.template`, []string{"pytorchjob", "pytorchjob-created"}},
	{`.spec.pytorchReplicaSpecs.Master.template`, []string{"pytorchjob", "pytorchjob-created"}},
	{`.spec.pytorchReplicaSpecs.Worker.replicas // 1`, []string{"pytorchjob", "pytorchjob-created"}},
	{`.spec.elasticPolicy.minReplicas`, []string{"pytorchjob", "pytorchjob-created"}},
	{`.spec.runPolicy.suspend`, []string{"pytorchjob", "mpijob", "raycluster"}},
	{`.status.conditions`, []string{"pytorchjob", "nimservice"}},
	{`.metadata.labels["training.kubeflow.org/replica-type"]`, []string{"pod", "pytorchjob"}},
	{`.metadata.labels["training.kubeflow.org/job-name"]`, []string{"pod", "jobset"}},
	{`.spec.headGroupSpec.template`, []string{"raycluster", "rayjob"}},
	{`.spec.workerGroupSpecs[]?.groupName`, []string{"raycluster", "rayjob"}},
	{`.spec.rayClusterSpec.workerGroupSpecs[]?.groupName`, []string{"rayjob", "raycluster"}},
	{`(.replicas // 0) * (.numOfHosts // 1)`, []string{"workergroup", "raycluster", "replicatedjob"}},
	{`(.minReplicas // 0) * (.numOfHosts // 1)`, []string{"workergroup", "raycluster"}},
	{`.status.state`, []string{"raycluster", "nimservice", "dynamo"}},
	{`.status.jobDeploymentStatus`, []string{"rayjob", "raycluster"}},
	{`.spec.suspend`, []string{"raycluster", "rayjob", "jobset"}},
	{`.spec.rayClusterSpec`, []string{"rayjob"}},
	{`.spec.predictor | first((.model | select(. != null)), (.[]? | select(type == "object" and has("storageUri"))), .model)`,
		[]string{"inferenceservice", "inferenceservice-custom", "jobset"}},
	{`.spec.transformer | select(. != null) | "transformer"`, []string{"inferenceservice-custom", "inferenceservice"}},
	{`.spec.predictor.minReplicas // 1`, []string{"inferenceservice", "inferenceservice-custom"}},
	{`.spec.template`, []string{"knative-service", "pod"}},
	{`.spec.template.metadata.annotations["autoscaling.knative.dev/initial-scale"] // "1"`, []string{"knative-service", "pod"}},
	{`.spec.template.metadata.annotations | .["autoscaling.knative.dev/min-scale"] // .["autoscaling.knative.dev/minScale"]`,
		[]string{"knative-service", "pod"}},
	{`.spec.template.metadata.annotations | .["autoscaling.knative.dev/max-scale"] // .["autoscaling.knative.dev/maxScale"]`,
		[]string{"knative-service"}},
	{`.spec.mpiReplicaSpecs.Launcher.template`, []string{"mpijob", "pytorchjob"}},
	{`.spec.mpiReplicaSpecs.Worker.replicas // 1`, []string{"mpijob", "pytorchjob"}},
	{`.spec.image.repository + ":" + .spec.image.tag`, []string{"nimservice", "pod", "jobset"}},
	{`(.spec.replicas // 1) * (.spec.multiNode.size // 1)`, []string{"nimservice", "leaderworkerset"}},
	{`.spec.labels`, []string{"nimservice"}},
	{`.spec.annotations`, []string{"nimservice"}},
	{`.spec.resources`, []string{"nimservice"}},
	{`.spec.schedulerName`, []string{"nimservice", "pod"}},
	{`.spec.podAffinity`, []string{"nimservice"}},
	{`.spec.scale.hpa`, []string{"nimservice", "milvus"}},
	{`.spec.replicas // 1`, []string{"leaderworkerset", "leaderworkerset-workeronly", "nimservice"}},
	{`.spec.leaderWorkerTemplate | (.leaderTemplate // .workerTemplate)`, []string{"leaderworkerset", "leaderworkerset-workeronly"}},
	{`.spec.leaderWorkerTemplate.workerTemplate`, []string{"leaderworkerset", "leaderworkerset-workeronly"}},
	{`(.spec.leaderWorkerTemplate.size // 1) - 1`, []string{"leaderworkerset", "leaderworkerset-workeronly"}},
	{`select(.spec.mode == "cluster") | "querynode"`, []string{"milvus", "milvus-standalone"}},
	{`.spec.components.querynode.replicas`, []string{"milvus", "milvus-standalone"}},
	{`.spec.components.querynode.hpa.minReplicas`, []string{"milvus", "milvus-standalone"}},
	{`.status.status`, []string{"milvus", "milvus-standalone"}},
	{`.spec.services // {} | keys[]`, []string{"dynamo", "milvus"}},
	{`.spec.services[]?`, []string{"dynamo", "milvus"}},
	{`.spec.services[]?.extraPodSpec.mainContainer`, []string{"dynamo"}},
	{`.spec.services[]? | (.replicas // 1) * (.multinode.nodeCount // 1)`, []string{"dynamo", "milvus"}},
	{`.x // 1`, []string{"pod", "jobset"}},
}

func readObject(t testing.TB, name string) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", "objects", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSpecExpressionsTranslate: the built-in Kartas' expressions must all
// translate.
func TestSpecExpressionsTranslate(t *testing.T) {
	u := NewPortableUnit()
	for _, s := range specSeeds {
		if _, err := u.Add(s.expr); err != nil {
			t.Errorf("%s: %v", s.expr, err)
		}
	}
}

// Fuzz programs are either literal ("=" then a jq expression) or bytes
// that drive a generator over the subset and a few constructs outside it.

// fuzzKeys are the keys generated paths use; fuzzInputs use them too, so
// that paths meet data.
var fuzzKeys = []string{"a", "b", "c", "name", "spec", "replicas", "x", "a b", "", "é"}

var fuzzLiterals = []string{
	`null`, `true`, `false`, `0`, `1`, `-1`, `2`, `3`, `10`, `0.5`, `-2.5`, `1e3`, `1.5`,
	`"a"`, `""`, `"x,y"`, `"True"`, `"1"`, `"name"`, `[]`, `{}`, `[1,2]`, `{"a":1}`,
}

// fuzzFallbacks are constructs outside the subset (and some inside it): an
// expression outside is refused by the portable unit, and is not compared.
var fuzzFallbacks = []string{
	`test("a")`, `ascii_downcase`, `reduce .[]? as $x (0; . + $x)`, `@base64`, `any`, `all`,
	`join(",")`, `(. as $x | $x)`, `sort`, `[paths]`, `tojson`, `[.[]?] | length`,
	`(.. | numbers)`, `splits(",")`, `ltrimstr("a")`, `min`, `first`, `add(.[]?)`, `limit(2; .[]?)`,
}

type progGen struct {
	data    []byte
	pos     int
	budget  int      // nodes left
	streams int      // stream multipliers left (iteration, comma)
	vars    []string // the variables bound where the expression is
	bound   int      // variables bound so far, to name the next ($v1, $v2 …)
}

// variable is a read of a bound variable: alone, in a string, as an
// object's key or entry, or indexed; a path when none is bound.
func (p *progGen) variable() string {
	if len(p.vars) == 0 {
		return p.path()
	}
	v := p.vars[p.choose(len(p.vars))]
	switch p.choose(5) {
	case 0:
		return `"<\(` + v + `)>"`
	case 1:
		return "{" + v + "}"
	case 2:
		return "{" + v + ": 1}"
	case 3:
		return v + p.suffix()
	}
	return v
}

// binding is LEFT as $vN | BODY, BODY reading $vN (or shadowing it, when
// the name is reused) and the variables outside.
func (p *progGen) binding(d int) string {
	left := p.expr(d)
	name := "$v" + strconv.Itoa(p.bound%3+1)
	p.bound++
	p.vars = append(p.vars, name)
	body := p.expr(d)
	p.vars = p.vars[:len(p.vars)-1]
	return "(" + left + " as " + name + " | " + body + ")"
}

func (p *progGen) choose(n int) int {
	if p.pos >= len(p.data) {
		return 0
	}
	b := p.data[p.pos]
	p.pos++
	return int(b) % n
}

func (p *progGen) key() string { return fuzzKeys[p.choose(len(fuzzKeys))] }

func (p *progGen) suffix() string {
	var s string
	switch p.choose(7) {
	case 0, 1:
		s = "." + quoteKey(p.key())
	case 2:
		s = "[" + strconv.Itoa(p.choose(5)-2) + "]"
	case 3:
		s = "[" + []string{"1:", ":2", "-1:", "1:3", "0.5:2.5"}[p.choose(5)] + "]"
	case 4:
		if p.streams > 0 {
			p.streams--
			s = "[]"
		} else {
			s = ".a"
		}
	case 5:
		s = "[" + strconv.Quote(p.key()) + "]"
	default:
		s = `."` + p.key() + `"`
	}
	if p.choose(3) == 0 {
		s += "?"
	}
	return s
}

func quoteKey(k string) string {
	if isLuaIdent(k) {
		return k
	}
	return strconv.Quote(k)
}

func (p *progGen) path() string {
	s := ""
	for i := range 1 + p.choose(3) {
		suf := p.suffix()
		if i == 0 && strings.HasPrefix(suf, "[") {
			s = "."
		}
		s += suf
	}
	return s
}

func (p *progGen) expr(depth int) string {
	p.budget--
	if depth <= 0 || p.budget <= 0 {
		if p.choose(2) == 0 {
			return p.path()
		}
		return fuzzLiterals[p.choose(len(fuzzLiterals))]
	}
	d := depth - 1
	switch p.choose(24) {
	case 0, 1, 2:
		return p.path()
	case 3:
		return fuzzLiterals[p.choose(len(fuzzLiterals))]
	case 4:
		return p.expr(d) + " | " + p.expr(d)
	case 5:
		if p.streams > 0 {
			p.streams--
			return "(" + p.expr(d) + ", " + p.expr(d) + ")"
		}
		return p.path()
	case 6:
		return "(" + p.expr(d) + " // " + p.expr(d) + ")"
	case 7:
		ops := []string{"==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "and", "or"}
		return "(" + p.expr(d) + " " + ops[p.choose(len(ops))] + " " + p.expr(d) + ")"
	case 8:
		s := "if " + p.expr(d) + " then " + p.expr(d)
		if p.choose(2) == 0 {
			s += " elif " + p.expr(d) + " then " + p.expr(d)
		}
		if p.choose(3) != 0 {
			s += " else " + p.expr(d)
		}
		return s + " end"
	case 9:
		fns := []string{"length", "keys", "to_entries", "add", "tostring", "tonumber", "type", "not", "empty", "error"}
		return fns[p.choose(len(fns))]
	case 10:
		fns := []string{"has", "map", "first", "select", "error"}
		return fns[p.choose(len(fns))] + "(" + p.expr(d) + ")"
	case 11:
		return "[" + p.expr(d) + "]"
	case 12:
		var kvs []string
		for range 1 + p.choose(3) {
			switch p.choose(4) {
			case 0:
				kvs = append(kvs, quoteKey(p.key())+": "+p.expr(d))
			case 1:
				kvs = append(kvs, "("+p.expr(d)+"): "+p.expr(d))
			case 2:
				kvs = append(kvs, quoteKey(p.key()))
			default:
				kvs = append(kvs, `"k\(`+p.expr(d)+`)": `+p.expr(d))
			}
		}
		return "{" + strings.Join(kvs, ", ") + "}"
	case 13:
		return `"\(` + p.expr(d) + `)-\(` + p.expr(d) + `)"`
	case 14:
		if p.choose(2) == 0 {
			return "(try (" + p.expr(d) + "))"
		}
		return "(try (" + p.expr(d) + ") catch (" + p.expr(d) + "))"
	case 15:
		return "(" + p.expr(d) + ")?"
	case 16:
		return "-" + p.path()
	case 17:
		return p.expr(d) + " | " + fuzzFallbacks[p.choose(len(fuzzFallbacks))]
	case 18:
		return "select(" + p.expr(d) + ")"
	case 19:
		return "first(" + p.expr(d) + ")"
	case 20:
		return p.binding(d)
	case 21, 22:
		return p.variable()
	default:
		return p.path()
	}
}

// fuzzInput returns the input JSON of a fuzz case: the bytes when they are
// JSON, else a value generated from them, an object or array of small
// ints, floats, strings, nulls and booleans nested a few levels, keyed by
// fuzzKeys.
func fuzzInput(b []byte) []byte {
	if _, err := decodeInput(b); err == nil {
		return b
	}
	p := &progGen{data: b, budget: 40}
	var value func(depth int) any
	value = func(depth int) any {
		p.budget--
		c := p.choose(12)
		if depth <= 0 || p.budget <= 0 {
			c %= 8
		}
		switch c {
		case 0:
			return nil
		case 1:
			return p.choose(2) == 0
		case 2, 3:
			return json.Number(strconv.Itoa(p.choose(21) - 10))
		case 4:
			n := int64(p.choose(256))<<23 | int64(p.choose(256))<<15 | int64(p.choose(256))<<7 | int64(p.choose(128))
			if p.choose(2) == 0 {
				n = -n
			}
			return json.Number(strconv.FormatInt(n, 10))
		case 5:
			return json.Number(strconv.FormatFloat(float64(p.choose(41)-20)/4, 'g', -1, 64))
		case 6, 7:
			return []string{"a", "", "x,y", "True", "1", "name", "é", "A b"}[p.choose(8)]
		case 8, 9:
			n := p.choose(4)
			arr := make([]any, n)
			for i := range arr {
				arr[i] = value(depth - 1)
			}
			return arr
		default:
			obj := map[string]any{}
			for range p.choose(5) {
				obj[p.key()] = value(depth - 1)
			}
			return obj
		}
	}
	var top any
	if p.choose(3) == 0 {
		top = []any{value(3), value(3), value(3)}
	} else {
		top = map[string]any{"a": value(3), p.key(): value(3), p.key(): value(3)}
	}
	out, err := json.Marshal(top)
	if err != nil {
		panic(err)
	}
	return out
}

// fuzzProgram turns fuzz bytes into a jq expression.
func fuzzProgram(b []byte) string {
	if len(b) > 0 && b[0] == '=' {
		return string(b[1:])
	}
	p := &progGen{data: b, budget: 24, streams: 3}
	return p.expr(4)
}

// unboundedNames are skipped in literal programs: the differential test is
// about values, and these can run forever, reach outside, or build huge
// values (karta's safety check rejects them anyway).
var unboundedNames = []string{
	"range", "repeat", "until", "while", "recurse", "..", "def ", "input", "env", "$ENV",
	"halt", "debug", "stderr", "combinations", "walk", "limit", "now", "splits", "getpath",
	"paths", "tostream", "fromstream", "implode", "ltrimstr", "@", "path(", "$__",
}

// fuzzInputOK bounds an input: small enough that nested iterations stay
// cheap, and without numbers that would let `*` repeat a string into
// gigabytes.
func fuzzInputOK(v any, expr string) bool {
	nodes, maxAbs := 0, 0.0
	var walk func(v any)
	walk = func(v any) {
		nodes++
		switch x := v.(type) {
		case json.Number:
			if f, _ := x.Float64(); math.Abs(f) > maxAbs || math.IsNaN(f) {
				maxAbs = math.Abs(f)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	if nodes > 200 {
		return false
	}
	return !strings.Contains(expr, "*") || maxAbs <= 1<<16
}

func FuzzJQ(f *testing.F) {
	for _, s := range specSeeds {
		for _, o := range s.objects {
			f.Add([]byte("="+s.expr), readObject(f, o))
		}
	}
	for _, s := range builtinSeeds(f) {
		for _, in := range s.inputs {
			f.Add([]byte("="+s.expr), in)
		}
	}
	generated := [][]byte{
		{4, 1, 2, 3, 0, 0, 1}, {7, 0, 1, 6, 2, 9}, {12, 3, 1, 5, 7, 2, 8, 1},
		{8, 1, 9, 4, 3, 0, 2, 5, 1, 6}, {14, 7, 1, 2, 3, 10, 3}, {13, 1, 2, 3, 4, 5},
		{6, 5, 1, 2, 0, 3, 4}, {17, 2, 1, 0, 5}, {10, 2, 11, 5, 3}, {15, 4, 4, 1, 7, 9},
		{20, 3, 13, 21, 0}, // "a" as $v1 | "<\($v1)>"
	}
	inputs := []string{
		`{"a":1,"b":"x,y","c":null,"name":"n","spec":{"replicas":3,"x":[1,2]},"x":[{"a":1},{"b":2}],"a b":true,"":0,"é":-2.5}`,
		`[1,"a",null,true,[2,3],{"a":0,"name":"z"},-0.5,2147483647]`,
		`{"spec":{"replicas":null,"name":["a","b"],"a":{"a":{"a":1}}},"replicas":-7,"c":[[],{}]}`,
		`"a,b"`, `null`, `-3`, `0.25`,
	}
	for i, g := range generated {
		f.Add(g, []byte(inputs[i%len(inputs)]))
	}
	// bindings written out: a stream bound, read in keys and strings,
	// under try, first and select, shadowed
	for _, expr := range []string{
		`.spec as $s | .x[]? | {a: $s.replicas, b: .}`, `(.a, .b) as $v1 | "<\($v1)>" as $v2 | {$v1, $v2: 1}`,
		`.name as $n | [.x[]? | select(.a == $n)] | first(.[] | try error($n) catch .)`,
		`1 as $x | (2 as $x | .a, $x) | [., $x]`,
	} {
		f.Add([]byte("="+expr), []byte(inputs[0]))
		f.Add([]byte("="+expr), []byte(inputs[1]))
	}
	f.Fuzz(func(t *testing.T, program, inputJSON []byte) {
		if len(program) > 512 || len(inputJSON) > 4096 {
			return
		}
		expr := fuzzProgram(program)
		if len(program) > 0 && program[0] == '=' {
			for _, name := range unboundedNames {
				if strings.Contains(expr, name) {
					return
				}
			}
		}
		q, err := gojq.Parse(expr)
		if err != nil {
			return
		}
		if _, err := gojq.Compile(q); err != nil {
			return
		}
		inputJSON = fuzzInput(inputJSON)
		raw, err := decodeInput(inputJSON)
		if err != nil || !fuzzInputOK(raw, expr) {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		diff, _, err := differ(ctx, expr, inputJSON)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if diff != "" {
			t.Fatal(diff)
		}
	})
}
