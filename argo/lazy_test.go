package argo

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
)

// Scripts get the object as lazy tables (luaapi.NewLazy); these tests hold
// that no script can tell them from the eager conversion Argo CD does
// (toLua): every raw access path of the sandbox, mutation, aliasing,
// results read back in Go, errors and limits.

// compileEager compiles a script that converts the whole object before it
// runs, as Argo CD does.
func compileEager(name, source string, limits luaapi.Limits) (*Script, error) {
	s, err := CompileWith(name, source, limits)
	if err != nil {
		return nil, err
	}
	s.eager = true
	return s, nil
}

// outcome is what a run gives: the result as fromLua reads it (the JSON
// value Argo CD's encoding stands for), or the error's text.
type outcome struct {
	Value any
	Err   string
}

func rawRun(s *Script, obj map[string]any, params map[string]string) outcome {
	var x any
	err := s.call(context.Background(), obj, params, func(L *lua.LState, v lua.LValue) error {
		var err error
		x, err = fromLua(L, v)
		return err
	})
	if err != nil {
		return outcome{Err: err.Error()}
	}
	return outcome{Value: x}
}

// bothWays runs source lazily and eagerly on obj and returns both outcomes.
func bothWays(t testing.TB, source string, limits luaapi.Limits, obj map[string]any) (lazy, eager outcome) {
	t.Helper()
	ls, err := CompileWith("t.lua", source, limits)
	require.NoError(t, err, source)
	es, err := compileEager("t.lua", source, limits)
	require.NoError(t, err, source)
	// Twice each: a state goes back to the pool and serves again.
	for range 2 {
		lazy, eager = rawRun(ls, obj, nil), rawRun(es, obj, nil)
	}
	return lazy, eager
}

// lazyObject is a Deployment as the API server returns it, in client-go
// form, with the shapes conversion must get right: null members and
// elements, empty objects and arrays, large and fractional numbers.
func lazyObject() map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name": "web", "namespace": "shop", "generation": int64(7),
			"labels":      map[string]any{"app": "web", "tier": "frontend"},
			"annotations": nil,
			"finalizers":  []any{},
		},
		"spec": map[string]any{
			"replicas": int64(3),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"args":     []any{"serve", nil, "--port", "8080"},
			"when":     map[string]any{"year": int64(2024), "month": int64(5), "day": int64(17), "hour": int64(12)},
			"ratio":    0.25,
			"big":      int64(1) << 60,
			"empty":    map[string]any{},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{
					"containers": []any{
						map[string]any{"name": "web", "image": "nginx:1.27", "ports": []any{map[string]any{"containerPort": int64(80)}}, "resources": map[string]any{}},
						map[string]any{"name": "sidecar", "image": "envoy:1.30", "args": []any{}},
					},
				},
			},
		},
		"status": map[string]any{
			"observedGeneration": int64(7),
			"replicas":           int64(3),
			"readyReplicas":      int64(2),
			"conditions": []any{
				map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
				map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "message": nil},
			},
		},
	}
}

// TestLazyTablesAreEagerTables runs scripts that use every raw access a
// sandboxed script has on the object's tables — next, pairs, ipairs,
// unpack, #, the table library, os.time, dynamic (guarded) stores — and
// mutation, aliasing, identity and results that hand back untouched
// subtrees: the lazy tables must give exactly what the eager ones give.
func TestLazyTablesAreEagerTables(t *testing.T) {
	for _, tc := range []struct{ name, script string }{
		{"untouched object returned", `return obj`},
		{"untouched subtree returned", `return obj.spec.template`},
		{"read a path", `return {obj.status.conditions[1].type, obj.status.conditions[2].reason, obj.metadata.annotations}`},
		{"length", `return {#obj.spec.args, #obj.status.conditions, #obj.spec, #obj.metadata.finalizers, #obj.spec.empty}`},
		{"length of an untouched array", `local a = obj.spec.template.spec.containers return #a`},
		{"next", `local s = obj.status.conditions local k, v = next(s) return {k, v.type, next(obj.spec.empty) == nil, next(obj.metadata.finalizers) == nil}`},
		{"next from a key", `local a = obj.spec.args return {next(a, 1)}`},
		{"pairs", `local ks = {} for k, v in pairs(obj.spec) do ks[#ks+1] = k .. "=" .. type(v) end table.sort(ks) return ks`},
		{"pairs on an array", `local n, s = 0, 0 for i, v in pairs(obj.spec.args) do n = n + 1 s = s + i end return {n, s}`},
		{"ipairs", `local out = {} for i, c in ipairs(obj.status.conditions) do out[i] = c.type end return out`},
		{"ipairs on an untouched array", `local n = 0 for _ in ipairs(obj.spec.template.spec.containers) do n = n + 1 end return n`},
		{"unpack", `return {unpack(obj.spec.args)}`},
		{"unpack with bounds", `return {select('#', unpack(obj.spec.args, 2, 3)), unpack(obj.spec.args, 2, 3)}`},
		{"table.insert", `table.insert(obj.spec.args, "x") table.insert(obj.spec.args, 1, "first") return obj.spec.args`},
		{"table.remove", `local r = table.remove(obj.status.conditions, 1) return {r.type, obj.status.conditions}`},
		{"table.concat", `return table.concat(obj.spec.args, ",")`},
		{"table.concat of tables", `return table.concat(obj.status.conditions, ",")`},
		{"table.sort", `table.sort(obj.spec.args) return obj.spec.args`},
		{"table.sort with a function", `table.sort(obj.status.conditions, function(a, b) return a.type > b.type end) return obj.status.conditions`},
		{"table.getn and maxn", `return {table.getn(obj.spec.args), table.maxn(obj.status.conditions), table.getn(obj.spec)}`},
		{"os.time of an object table", `return os.time(obj.spec.when)`},
		{"mutation then read", `obj.spec.replicas = 5 obj.status.readyReplicas = nil return {obj.spec.replicas, obj.status.readyReplicas, obj.status}`},
		{"mutation of an untouched table, then returned", `local s = obj.spec.selector s.matchLabels = {} return obj`},
		{"dynamic stores", `local k = "rep" .. "licas" obj.spec[k] = 9 obj.spec.args[#obj.spec.args + 1] = "y" obj.metadata.labels[k] = nil return obj`},
		{"store into a fresh key", `local m = obj.metadata local k = "new" .. "Key" m[k] = {1, 2} return m`},
		{"aliasing one subtable", `local a = obj.spec return {a, a}`},
		{"aliasing an untouched subtable", `local a = obj.spec.template return {x = a, y = obj.spec.template}`},
		{"aliasing through the object", `return {obj.spec, obj}`},
		{"identity", `local a, b = obj.spec, obj.spec local c = obj.status.conditions return {a == b, c[1] == obj.status.conditions[1], a ~= obj.status, rawequal == nil}`},
		{"identity after filling", `local c = obj.status.conditions local n = #c return {c == obj.status.conditions, n}`},
		{"pairs returns next", `local f = pairs(obj.spec) local g = ipairs(obj.spec.args) return {f == next, g ~= next}`},
		{"types and strings", `return {type(obj), type(obj.spec.args), type(tostring(obj.spec)), string.format("%d:%s", #obj.spec.args, type(obj.spec)), string.find(tostring(obj.status), "^table: ") ~= nil}`},
		{"a table as a key", `local t = {} t[obj.spec] = "spec" return {t[obj.spec], t[obj.status]}`},
		{"global obj rebuilt", `obj = {kind = obj.kind, spec = obj.spec} return obj`},
		{"returning a member of an array", `return obj.spec.template.spec.containers[2]`},
		{"an empty object read and returned", `local e = obj.spec.empty return {e, #e}`},
		{"empty object untouched", `return {obj.spec.empty, obj.metadata.finalizers}`},
		{"numbers", `return {obj.spec.big, obj.spec.ratio * 4, obj.metadata.generation + 1}`},
		{"concat of a table", `return "x" .. obj.spec`},
		{"arithmetic on a table", `return obj.spec + 1`},
		{"calling a table", `return obj.spec()`},
		{"comparing tables", `return obj.spec < obj.status`},
		{"indexing nil", `return obj.spec.nothing.deeper`},
		{"pcall around raw access", `local ok, e = pcall(table.concat, obj.status.conditions) return {ok, e}`},
		{"a function in the result", `obj.spec.f = print or function() end return obj`},
		{"the jq runtime's idiom", `local function keys(t) local ks = {} for k in pairs(t) do ks[#ks+1] = k end table.sort(ks) return ks end
local function len(t) local n = 0 for _ in pairs(t) do n = n + 1 end return n end
return {keys(obj.metadata), len(obj.spec.template.spec.containers[1]), keys(obj.spec.empty)}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lazy, eager := bothWays(t, tc.script, luaapi.Limits{}, lazyObject())
			assert.Equal(t, eager, lazy)
		})
	}
}

// Objects that cannot be converted fail the same way however little of
// them the script reads.
func TestLazyObjectErrorsAreEagerErrors(t *testing.T) {
	deep := any("leaf")
	for range luaapi.MaxDepth + 1 {
		deep = map[string]any{"k": deep}
	}
	for _, tc := range []struct {
		name string
		obj  map[string]any
	}{
		{"nil object", nil},
		{"empty object", map[string]any{}},
		{"a Go struct", map[string]any{"spec": map[string]any{"x": struct{}{}}}},
		{"too deep", map[string]any{"spec": deep}},
		{"NaN", map[string]any{"spec": map[string]any{"x": math.NaN()}}},
		{"invalid UTF-8", map[string]any{"spec": map[string]any{"k\xff": "v\xfe"}}},
		{"json.Number and float32", map[string]any{"spec": map[string]any{"n": json.Number("12"), "f": float32(1.5), "i": 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, script := range []string{`return obj.kind`, `return obj`, `return obj.spec`} {
				lazy, eager := bothWays(t, script, luaapi.Limits{}, tc.obj)
				assert.Equal(t, eager, lazy, script)
			}
		})
	}
}

// The memory guard charges stores into the object's tables as it charges
// them into eager tables: overwriting a member that exists costs nothing,
// new members cost a slot each. 5,000 overwrites of existing members stay
// under a 256 KiB limit (charged as new members, they would pass it), and
// new members then reach it.
func TestLazyStoresChargedAsEager(t *testing.T) {
	items := make([]any, 5000)
	for i := range items {
		items[i] = map[string]any{"v": int64(i)}
	}
	obj := map[string]any{"items": items}
	limits := luaapi.Limits{MaxMemory: 256 << 10}
	overwrite := `local k = "v" for _, m in ipairs(obj.items) do m[k] = 0 end return #obj.items`
	lazy, eager := bothWays(t, overwrite, limits, obj)
	assert.Equal(t, eager, lazy)
	assert.Equal(t, outcome{Value: float64(5000)}, lazy)

	add := `local k = "w" for _, m in ipairs(obj.items) do m[k] = 0 end return #obj.items`
	lazy, eager = bothWays(t, add, limits, obj)
	assert.Equal(t, eager, lazy)
	assert.Contains(t, lazy.Err, "memory limit 256 KiB exceeded")
}

// FuzzLazyAgreesWithEager runs random access scripts (randomScript) over
// random objects: lazily and eagerly, the results and errors are equal.
func FuzzLazyAgreesWithEager(f *testing.F) {
	for seed := range uint64(16) {
		f.Add(seed, "")
	}
	f.Add(uint64(1), `{"a":{"b":[1,null,{"c":{}}],"d":[]},"e":null,"x y":[[],{}]}`)
	f.Add(uint64(2), `{"spec":{"args":["a","b"],"n":1e300,"m":-0,"s":"\ud800"}}`)
	f.Fuzz(func(t *testing.T, seed uint64, objJSON string) {
		checkLazyAgainstEager(t, seed, objJSON)
	})
}

// TestLazyAgreesWithEagerRandom is the fuzz check on a fixed set of seeds,
// so that every test run covers a few hundred random scripts and objects.
func TestLazyAgreesWithEagerRandom(t *testing.T) {
	n := uint64(400)
	if testing.Short() {
		n = 50
	}
	for seed := range n {
		checkLazyAgainstEager(t, seed, "")
	}
}

func checkLazyAgainstEager(t *testing.T, seed uint64, objJSON string) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var obj map[string]any
	if objJSON != "" {
		dec := json.NewDecoder(strings.NewReader(objJSON))
		dec.UseNumber()
		if err := dec.Decode(&obj); err != nil {
			return
		}
	} else {
		obj = randomObject(r, 0).(map[string]any)
	}
	script := randomScript(r, obj)
	lazy, eager := bothWays(t, script, luaapi.Limits{}, obj)
	if !assert.Equal(t, eager, lazy, "seed %d\n%s", seed, script) {
		t.FailNow()
	}
}

// randomObject is a random JSON object of client-go's types.
func randomObject(r *rand.Rand, depth int) any {
	keys := []string{"a", "b", "spec", "status", "1", "x y", ""}
	kind := r.IntN(10)
	if depth == 0 {
		kind = 0
	}
	if depth >= 4 && kind < 4 {
		kind += 4
	}
	switch kind {
	case 0, 1:
		m := map[string]any{}
		for range r.IntN(5) {
			m[keys[r.IntN(len(keys))]] = randomObject(r, depth+1)
		}
		return m
	case 2, 3:
		a := make([]any, r.IntN(5))
		for i := range a {
			a[i] = randomObject(r, depth+1)
		}
		return a
	case 4:
		return nil
	case 5:
		return r.IntN(2) == 0
	case 6:
		return []string{"x", "Healthy", "", "a,b"}[r.IntN(4)]
	case 7:
		return int64(r.IntN(7)) - 3
	case 8:
		return []any{int64(1) << 60, 0.5, -1.25e-3}[r.IntN(3)]
	}
	return r.IntN(3) == 0 // a few more booleans
}

// luaQuote is s as a Lua string literal.
func luaQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "\\%d", c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// randomPath is a Lua expression for a random place in v, reached from
// obj: mostly members and elements that exist, sometimes ones that do not.
func randomPath(r *rand.Rand, v any) string {
	expr := "obj"
	for r.IntN(4) != 0 {
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 || r.IntN(8) == 0 {
				return expr + "[" + luaQuote("missing") + "]"
			}
			i := r.IntN(len(x))
			for k, e := range x {
				if i == 0 {
					expr += "[" + luaQuote(k) + "]"
					v = e
					break
				}
				i--
			}
		case []any:
			// Lua indexes count non-null elements only.
			var elems []any
			for _, e := range x {
				if e != nil {
					elems = append(elems, e)
				}
			}
			if len(elems) == 0 {
				return expr + "[1]"
			}
			i := r.IntN(len(elems))
			expr += fmt.Sprintf("[%d]", i+1)
			v = elems[i]
		default:
			return expr
		}
	}
	return expr
}

// accessOps are what randomScript does with a value v: each is run under
// pcall, and what it yields (or its error) appended to out.
var accessOps = []string{
	`return type(v)`,
	`return #v`,
	`local ks = {} for k in pairs(v) do ks[#ks+1] = type(k) .. ":" .. tostring(k) end table.sort(ks) return table.concat(ks, ",")`,
	`local n = 0 for i, e in ipairs(v) do n = n + i end return n`,
	`return next(v) == nil`,
	`return select('#', unpack(v))`,
	`return {unpack(v)}`,
	`table.insert(v, "ins") return #v`,
	`return table.remove(v)`,
	`return table.concat(v, "|")`,
	`table.sort(v, function(a, b) return type(a) < type(b) end) return v`,
	`return table.getn(v) + table.maxn(v)`,
	`v.k = 1 return v.k`,
	`local k = "d" .. "yn" v[k] = {1} return v[k]`,
	`v[#v + 1] = "tail" return #v`,
	`v[1] = nil return #v`,
	`return v`,
	`return v == obj`,
	`return os.time(v)`,
	`return string.format("%s/%s", type(v), tostring(#v))`,
	`local c = 0 local k = next(v) while k ~= nil do c = c + 1 k = next(v, k) end return c`,
}

// randomScript is a script of a few random accesses to random paths of
// obj, returning what they yielded, the object, or one of its parts.
func randomScript(r *rand.Rand, obj map[string]any) string {
	var b strings.Builder
	b.WriteString("local out = {}\n")
	for range 1 + r.IntN(5) {
		op := accessOps[r.IntN(len(accessOps))]
		fmt.Fprintf(&b, "do local v = %s local ok, e = pcall(function() %s end) out[#out+1] = {ok, e} end\n", randomPath(r, obj), op)
	}
	switch r.IntN(4) {
	case 0:
		b.WriteString("return obj\n")
	case 1:
		fmt.Fprintf(&b, "return %s\n", randomPath(r, obj))
	case 2:
		fmt.Fprintf(&b, "return {out, %s}\n", randomPath(r, obj))
	default:
		b.WriteString("return out\n")
	}
	return b.String()
}

// CompileEager is compileEager for the external tests (lazy_corpus_test.go).
var CompileEager = compileEager
