package kube

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kartalua/karta/internal/testobj"
	"github.com/kartalua/karta/luaapi"
)

// Karmada's typed results as package karmada declares them (karmada/types.go;
// that package imports this one, so its types are restated here with the
// same fields and tags).
type (
	typedReplicaRequirements struct {
		NodeClaim         *typedNodeClaim     `json:"nodeClaim,omitempty"`
		ResourceRequest   corev1.ResourceList `json:"resourceRequest,omitempty"`
		Namespace         string              `json:"namespace,omitempty"`
		PriorityClassName string              `json:"priorityClassName,omitempty"`
	}
	typedNodeClaim struct {
		HardNodeAffinity *corev1.NodeSelector `json:"hardNodeAffinity,omitempty"`
		NodeSelector     map[string]string    `json:"nodeSelector,omitempty"`
		Tolerations      []corev1.Toleration  `json:"tolerations,omitempty"`
	}
	typedComponent struct {
		Name                string                         `json:"name"`
		Replicas            int32                          `json:"replicas"`
		ReplicaRequirements *typedComponentReplicaRequires `json:"replicaRequirements,omitempty"`
	}
	typedComponentReplicaRequires struct {
		NodeClaim         *typedNodeClaim     `json:"nodeClaim,omitempty"`
		ResourceRequest   corev1.ResourceList `json:"resourceRequest,omitempty"`
		PriorityClassName string              `json:"priorityClassName,omitempty"`
	}
	typedDependency struct {
		APIVersion    string                `json:"apiVersion"`
		Kind          string                `json:"kind"`
		Namespace     string                `json:"namespace,omitempty"`
		Name          string                `json:"name,omitempty"`
		LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
	}
	// typedOdd has what the decoder declines or handles apart: an
	// interface, []byte, a `,string` field, an embedded struct (its
	// fields promoted), floats, unsigned and narrow integers, bools, a
	// pointer to a pointer, an array, a map with integer keys.
	typedOdd struct {
		typedEmbedded
		Any    any                  `json:"any"`
		Bytes  []byte               `json:"bytes"`
		Quoted int                  `json:"quoted,string"`
		F32    float32              `json:"f32"`
		F64    float64              `json:"f64"`
		U8     uint8                `json:"u8"`
		I8     int8                 `json:"i8"`
		B      bool                 `json:"b"`
		PP     **string             `json:"pp"`
		Raw    runtime.RawExtension `json:"raw"`
		Ints   map[int]string       `json:"ints"`
		Arr    [2]string            `json:"arr"`
		Same   string               `json:"same"`
		Same2  string               `json:"SAME"`
	}
	typedEmbedded struct {
		Inner string `json:"inner"`
	}
	typedConflictA struct {
		X string
	}
	typedConflictB struct {
		X     string
		Other string `json:"other"`
	}
	// typedConflict and typedEmbedPointer always decline: encoding/json
	// picks between two promoted X fields, and allocates embedded
	// pointers.
	typedConflict struct {
		typedConflictA
		typedConflictB
		Name string `json:"name"`
	}
	typedEmbedPointer struct {
		*typedEmbedded
		Name string `json:"name"`
	}
	typedPlainOdd struct {
		F32   float32              `json:"f32"`
		F64   float64              `json:"f64"`
		U8    uint8                `json:"u8"`
		I8    int8                 `json:"i8"`
		B     bool                 `json:"b"`
		PP    **string             `json:"pp"`
		Raw   runtime.RawExtension `json:"raw"`
		Name  string               // no tag: its Go name
		Bad   string               `json:"a\"b"` // an invalid tag name: its Go name
		Skip  string               `json:"-"`
		Times []metav1.Time        `json:"times"`
		Any   any                  `json:"any"`
	}
)

// typedTargets are the types the differential tests decode into: each
// returns a fresh pointer.
// typedTarget is a type Unmarshal decodes into, by name.
type typedTarget struct {
	name string
	new  func() any
}

var typedTargets = []typedTarget{
	{"ReplicaRequirements", func() any { return &typedReplicaRequirements{} }},
	{"[]Component", func() any { return new([]typedComponent) }},
	{"[]DependentObjectReference", func() any { return new([]typedDependency) }},
	{"PodTemplateSpec", func() any { return &corev1.PodTemplateSpec{} }},
	{"RawExtension", func() any { return &runtime.RawExtension{} }},
	{"odd", func() any { return &typedOdd{} }},
	{"plainOdd", func() any { return &typedPlainOdd{} }},
	{"map", func() any { return new(map[string]int64) }},
	{"conflict", func() any { return &typedConflict{} }},
	{"embedPointer", func() any { return &typedEmbedPointer{} }},
}

// typedAlwaysDeclines are the targets the tree route never decodes.
var typedAlwaysDeclines = map[string]bool{"conflict": true, "embedPointer": true}

// sameAsText requires Unmarshal of lv into target to give what the
// text route gives, value and error; it returns the text route's value,
// Unmarshal's and the text route's error.
func sameAsText(t *testing.T, L *lua.LState, lv lua.LValue, target typedTarget, what string) (want, got any, wantErr error) {
	t.Helper()
	want, got = target.new(), target.new()
	wantErr = kubeUnmarshalText(L, lv, want)
	gotErr := Unmarshal(L, lv, got)
	if wantErr != nil {
		require.Error(t, gotErr, "%s into %s", what, target.name)
		assert.Equal(t, wantErr.Error(), gotErr.Error(), "%s into %s", what, target.name)
	} else {
		require.NoError(t, gotErr, "%s into %s", what, target.name)
	}
	assert.Equal(t, want, got, "%s into %s", what, target.name)
	return want, got, wantErr
}

// checkTyped holds Unmarshal to the text route for lv into every
// target, and counts the decodes the tree route took itself.
func checkTyped(t *testing.T, L *lua.LState, lv lua.LValue, what string, direct map[string]int) {
	t.Helper()
	for _, target := range typedTargets {
		want, got, wantErr := sameAsText(t, L, lv, target, what)
		if direct == nil {
			continue
		}
		// The tree route on its own, so that the count says it ran.
		root, err := kubeResultTree(L, lv, reflect.ValueOf(got).Elem().Kind() == reflect.Struct)
		if err != nil {
			continue
		}
		alone := target.new()
		if decodeTyped(root, reflect.ValueOf(alone)) {
			require.NoError(t, wantErr, "%s into %s: decoded where encoding/json fails", what, target.name)
			assert.Equal(t, want, alone, "%s into %s", what, target.name)
			direct[target.name]++
		} else {
			assert.True(t, reflect.ValueOf(alone).Elem().IsZero(), "%s into %s: a declined decode left its target zero", what, target.name)
		}
	}
}

// TestKubeTypedAgreesWithJSON: decoding the result tree into Karmada's
// typed results gives what encoding/json gives for the text — values and
// errors — on results modelled on the corpus's scripts and on hostile
// ones: wrong JSON types, keys differing only in case, unknown keys,
// nulls, bad and numeric quantities, integers out of range, fractions,
// invalid UTF-8, escapes, empty tables, mixed and sparse tables.
func TestKubeTypedAgreesWithJSON(t *testing.T) {
	L := luaapi.NewState(luaapi.SandboxOptions{})
	defer L.Close()
	direct := map[string]int{}
	scripts := []string{
		// Corpus-like results.
		`return {resourceRequest={cpu="500m", memory="1Gi", ["nvidia.com/gpu"]=2}, nodeClaim={nodeSelector={zone="a"}, tolerations={{key="k", operator="Exists", effect="NoSchedule", tolerationSeconds=30}}, hardNodeAffinity={nodeSelectorTerms={{matchExpressions={{key="a", operator="In", values={"x","y"}}}}}}}}`,
		`return {{name="jobmanager", replicas=1, replicaRequirements={resourceRequest={cpu=1, memory="2048Mi"}}}, {name="taskmanager", replicas=3}}`,
		`return {{apiVersion="v1", kind="ConfigMap", namespace="ns", name="cm"}, {apiVersion="v1", kind="Secret", namespace="ns", labelSelector={matchLabels={app="x"}, matchExpressions={{key="k", operator="In", values={"v"}}}}}}`,
		`return {metadata={name="p", labels={app="a"}, creationTimestamp="2024-01-02T03:04:05Z"}, spec={containers={{name="c", image="i", ports={{containerPort=80}}, resources={limits={cpu="1"}, requests={memory="1Gi"}}, livenessProbe={httpGet={port="http", path="/"}}}}, nodeSelector={a="b"}, priorityClassName="high"}}`,
		`return {f32=1.5, f64=-2.25e10, u8=255, i8=-128, b=true, pp="s", raw={a={1,2}}, Name="n", Bad="b", Skip="x", times={"2024-01-02T03:04:05Z"}}`,
		`return {a=1, b=-2, c=9007199254740993}`,
		`return {}`,
		// Hostile: types, ranges, case, unknown and odd keys.
		`return {{name="c", replicas=2147483648}}`,
		`return {{name="c", replicas=1.5}}`,
		`return {{name="c", replicas=-2147483648}}`,
		`return {{name="c", replicas="3"}}`,
		`return {{name=3, replicas=1}}`,
		`return {{Name="c", replicas=1}}`,
		`return {{NAME="c", name="d", replicas=1}}`,
		`return {{name="c", replicas=1, extra={deep={1,2,3}}}}`,
		`return {{name="c", ["\255"]=1}}`,
		`return {resourceRequest={cpu="bad"}}`,
		`return {resourceRequest={cpu=" 1 "}}`,
		`return {resourceRequest={cpu=1e21}}`,
		`return {resourceRequest={cpu=-0.5}}`,
		`return {resourceRequest={cpu=true}}`,
		`return {resourceRequest={cpu={1}}}`,
		`return {resourceRequest={["c\255"]="1"}}`,
		`return {resourceRequest={["\"q\""]="1"}}`,
		`return {resourceRequest={1, 2}}`,
		`return {resourceRequest="1"}`,
		`return {resourceRequest=null}`,
		`return {nodeClaim=null}`,
		`return {nodeClaim={nodeSelector={a=null}}}`,
		`return {nodeClaim={nodeSelector={a=1}}}`,
		`return {nodeClaim={tolerations={{tolerationSeconds=1.5}}}}`,
		`return {nodeClaim={tolerations={{tolerationSeconds=9223372036854775807}}}}`,
		`return {nodeClaim={tolerations={key="k"}}}`,
		`return {nodeClaim={tolerations={}}}`,
		`return {nodeClaim={}, namespace="\"<&>\226\128\168\255"}`,
		`return {priorityClassName="a\\b\nc"}`,
		`return {1, 2, 3}`,
		`return {{}}`,
		`return {{}, {name="x"}}`,
		`return {[1]=1, [3]=3}`,
		`return {[1]=1, a=2}`,
		`return {metadata={creationTimestamp="yesterday"}}`,
		`return {metadata={creationTimestamp=3}}`,
		`return {spec={containers={{ports={{containerPort="80"}}}}}}`,
		`return {spec={containers={{livenessProbe={httpGet={port=1.5}}}}}}`,
		`return {spec={containers={{livenessProbe={httpGet={port={}}}}}}}`,
		`return {spec={containers={{resources={limits={cpu="1x"}}}}}}`,
		`return {spec={volumes={{name="v", configMap={name="cm", defaultMode=420}}}}}`,
		`return {any={1}, bytes="aGk=", quoted="3", inner="i", same="s", SAME="t", ints={a="b"}, arr={"a","b"}}`,
		`return {same="s"}`,
		`return {Same2="s"}`,
		`return {u8=256}`, `return {u8=-1}`, `return {i8=128}`, `return {f32=1e39}`, `return {f64=2^1023*1.5}`,
		`return {b="true"}`, `return {b=1}`, `return {pp=null}`, `return {pp={}}`,
		`return {raw="s"}`, `return {raw=null}`, `return {times={3}}`,
		`return {Skip="x", ["-"]="y"}`,
		`return {["a\"b"]="x"}`,
		`return {X="i", other="o", name="n", inner="j"}`,
	}
	for _, src := range scripts {
		res := mustRun(t, L, src)
		checkTyped(t, L, res[0], src, direct)
	}
	// The tree route decoded every target on some of these.
	for _, target := range typedTargets {
		if typedAlwaysDeclines[target.name] {
			assert.Zero(t, direct[target.name], "the tree route declines %s", target.name)
		} else {
			assert.Positive(t, direct[target.name], "the tree route decoded into %s", target.name)
		}
	}

	// Random values shaped by the targets' types, hostile some of the time.
	rng := rand.New(rand.NewPCG(5, 6))
	direct = map[string]int{}
	for i := range 1500 {
		target := typedTargets[i%len(typedTargets)]
		g := typedGen{L: L, rng: rng, hostile: i%3 == 0}
		lv := g.value(reflect.TypeOf(target.new()).Elem(), 0)
		if _, ok := lv.(*lua.LTable); !ok {
			continue
		}
		checkTyped(t, L, lv, fmt.Sprintf("random %d (%s)", i, target.name), direct)
	}
	t.Logf("tree route decodes: %v", direct)
	for _, target := range typedTargets {
		if typedAlwaysDeclines[target.name] {
			assert.Zero(t, direct[target.name], "the tree route declines %s", target.name)
		} else {
			assert.Greater(t, direct[target.name], 20, "the tree route decoded random values into %s", target.name)
		}
	}
}

// typedGen makes a Lua value shaped like a Go type: tables with the
// type's JSON field names, quantities, times and numbers where the type
// has them; hostile, it also writes wrong types, keys in another case,
// unknown keys, nulls, fractions and out-of-range numbers.
type typedGen struct {
	L       *lua.LState
	rng     *rand.Rand
	hostile bool
}

var (
	typedStrings  = []string{"a", "", "500m", "1Gi", "2", "x<y>&z", "q\"b\\", "é\u2028", "\xff\xfe", "2024-01-02T03:04:05Z", " 3 ", "In", "bad-quantity"}
	typedNumbers  = []float64{0, 1, 3, -1, 255, 256, 2147483647, 2147483648, -2147483649, 1.5, -0.25, 1e21, 1e300, 9007199254740993}
	typedQuantity = reflect.TypeFor[corev1.ResourceList]().Elem()
	typedTime     = reflect.TypeFor[metav1.Time]()
)

func (g *typedGen) scalar() lua.LValue {
	switch g.rng.IntN(5) {
	case 0:
		return lua.LNumber(typedNumbers[g.rng.IntN(len(typedNumbers))])
	case 1:
		return lua.LBool(g.rng.IntN(2) == 0)
	case 2:
		return luaapi.Null(g.L)
	case 3:
		return g.L.NewTable()
	}
	return lua.LString(typedStrings[g.rng.IntN(len(typedStrings))])
}

func (g *typedGen) value(t reflect.Type, depth int) lua.LValue {
	if g.hostile && g.rng.IntN(8) == 0 || depth > 6 {
		return g.scalar()
	}
	switch {
	case t == typedQuantity:
		if g.rng.IntN(3) == 0 {
			return lua.LNumber(typedNumbers[g.rng.IntN(len(typedNumbers))])
		}
		return lua.LString([]string{"500m", "1Gi", "2", "0.5", "1e3", "100Mi", "1.5Ki", " 1", "bad"}[g.rng.IntN(9)])
	case t == typedTime:
		return lua.LString([]string{"2024-01-02T03:04:05Z", "2024-01-02T03:04:05+02:00", "bad"}[g.rng.IntN(3)])
	}
	switch t.Kind() {
	case reflect.String:
		return lua.LString(typedStrings[g.rng.IntN(len(typedStrings))])
	case reflect.Bool:
		return lua.LBool(g.rng.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		if g.hostile {
			return lua.LNumber(typedNumbers[g.rng.IntN(len(typedNumbers))])
		}
		return lua.LNumber(g.rng.IntN(100))
	case reflect.Pointer:
		return g.value(t.Elem(), depth)
	case reflect.Slice, reflect.Array:
		tb := g.L.NewTable()
		for range g.rng.IntN(3) {
			tb.Append(g.value(t.Elem(), depth+1))
		}
		return tb
	case reflect.Map:
		tb := g.L.NewTable()
		for range g.rng.IntN(3) {
			tb.RawSetString(typedStrings[g.rng.IntN(len(typedStrings))], g.value(t.Elem(), depth+1))
		}
		return tb
	case reflect.Struct:
		tb := g.L.NewTable()
		for i := range t.NumField() {
			sf := t.Field(i)
			if !sf.IsExported() || g.rng.IntN(2) == 0 {
				continue
			}
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				name = sf.Name
			}
			if g.hostile && g.rng.IntN(6) == 0 {
				name = strings.ToUpper(name)
			}
			tb.RawSetString(name, g.value(sf.Type, depth+1))
		}
		if g.hostile && g.rng.IntN(4) == 0 {
			tb.RawSetString("unknownField", g.scalar())
		}
		return tb
	}
	return g.scalar()
}

// FuzzKubeTypedAgreesWithJSON: any JSON document, as a Lua table (numbers
// as Lua numbers, null as the null sentinel) and as an unfilled lazy
// table, decodes into the typed targets — and, given a kind, into an
// Unstructured with and without a reference — as the text route decodes
// it, values and errors.
func FuzzKubeTypedAgreesWithJSON(f *testing.F) {
	for _, seed := range []string{
		`{"resourceRequest":{"cpu":"500m","memory":1073741824},"nodeClaim":{"nodeSelector":{"a":"b"},"tolerations":[{"key":"k","tolerationSeconds":5}]}}`,
		`[{"name":"a","replicas":2,"replicaRequirements":{"resourceRequest":{"cpu":"1"}}},{"name":"b","replicas":2147483648}]`,
		`[{"apiVersion":"v1","kind":"Secret","name":"s","labelSelector":{"matchLabels":{"a":"b"}}},{"APIVERSION":"v1"}]`,
		`{"metadata":{"name":"p","creationTimestamp":"2024-01-02T03:04:05Z"},"spec":{"containers":[{"name":"c","ports":[{"containerPort":80}],"livenessProbe":{"httpGet":{"port":"http"}}}]}}`,
		`{"f32":1.5,"u8":300,"b":true,"pp":"x","raw":[1,{"a":null}],"times":["bad"],"same":"s","SAME":"t"}`,
		`{"resourceRequest":{"cpu":"bad"},"namespace":"\u00ff\ud800"}`,
		`[]`, `{}`, `[[]]`, `{"a":[]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil || testobj.Depth(v) > 50 {
			return
		}
		L := luaapi.NewState(luaapi.SandboxOptions{})
		defer L.Close()
		lv, ok := fuzzLua(L, v)
		if !ok {
			return
		}
		if _, isTable := lv.(*lua.LTable); !isTable {
			return
		}
		checkTyped(t, L, lv, string(data), nil)
		// The same document as an unfilled lazy table (numbers as
		// json.Number), decoded from its Go value.
		if lazy, err := Lazy(L, v); err == nil {
			if _, isTable := lazy.(*lua.LTable); isTable {
				checkTyped(t, L, lazy, "lazy "+string(data), nil)
			}
		}
		// As an object with a kind, into an Unstructured (built from the
		// tables, unstructuredDirect), with and without itself as the
		// fix-up's reference, eager and lazy.
		m, isObject := v.(map[string]any)
		if !isObject {
			return
		}
		m["kind"] = "K"
		asLua, ok := fuzzLua(L, m)
		if !ok {
			return
		}
		lazy, err := Lazy(L, m)
		if err != nil {
			return
		}
		for _, lv := range []lua.LValue{asLua, lazy} {
			for _, refs := range [][]any{nil, {m}} {
				want, wantErr := unmarshalViaText(L, lv, refs...)
				got := &unstructured.Unstructured{}
				gotErr := Unmarshal(L, lv, got, refs...)
				if wantErr != nil {
					require.Error(t, gotErr)
					assert.Equal(t, wantErr.Error(), gotErr.Error())
					continue
				}
				require.NoError(t, gotErr)
				assert.Equal(t, want.Object, got.Object)
			}
		}
	})
}

// fuzzLua is a JSON value as a Lua value: null is the null sentinel (so
// that it can sit in tables), numbers are Lua numbers.
func fuzzLua(L *lua.LState, v any) (lua.LValue, bool) {
	switch x := v.(type) {
	case nil:
		return luaapi.Null(L), true
	case bool:
		return lua.LBool(x), true
	case string:
		return lua.LString(x), true
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil, false
		}
		return lua.LNumber(f), true
	case []any:
		tb := L.NewTable()
		for _, e := range x {
			lv, ok := fuzzLua(L, e)
			if !ok {
				return nil, false
			}
			tb.Append(lv)
		}
		return tb, true
	case map[string]any:
		tb := L.NewTable()
		for k, e := range x {
			lv, ok := fuzzLua(L, e)
			if !ok {
				return nil, false
			}
			tb.RawSetString(k, lv)
		}
		return tb, true
	}
	return nil, false
}

// luaToGo is a generated Lua value as a Go value of JSON's types, the
// way objects reach Lazy: numbers as int64 where integral (or
// float64), the null sentinel as nil, an empty table as an empty map or
// slice at random.
func luaToGo(L *lua.LState, rng *rand.Rand, lv lua.LValue) any {
	switch x := lv.(type) {
	case lua.LBool:
		return bool(x)
	case lua.LString:
		return string(x)
	case lua.LNumber:
		if f := float64(x); f == float64(int64(f)) && rng.IntN(2) == 0 {
			return int64(f)
		}
		return float64(x)
	case *lua.LTable:
		if x.Len() > 0 {
			var a []any
			x.ForEach(func(_, v lua.LValue) { a = append(a, luaToGo(L, rng, v)) })
			return a
		}
		m := map[string]any{}
		x.ForEach(func(k, v lua.LValue) { m[k.String()] = luaToGo(L, rng, v) })
		if len(m) == 0 && rng.IntN(2) == 0 {
			return []any{}
		}
		return m
	}
	return nil // the null sentinel
}

// TestKubeTypedLazyAgreesWithJSON: an unfilled lazy table (a pod template
// passed on untouched) decoded from its Go value gives what the text
// route gives for the same table, values and errors, on values shaped by
// the targets (nulls, empty maps and slices, nested empties, int64 and
// float64 numbers, hostile ones as in TestKubeTypedAgreesWithJSON).
func TestKubeTypedLazyAgreesWithJSON(t *testing.T) {
	L := luaapi.NewState(luaapi.SandboxOptions{})
	defer L.Close()
	rng := rand.New(rand.NewPCG(9, 10))
	direct := map[string]int{}
	fixed := []any{
		map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "env": []any{}, "args": nil,
			"resources": map[string]any{"limits": map[string]any{"cpu": int64(1), "memory": "1Gi"}, "requests": map[string]any{}}}}}},
		map[string]any{"spec": map[string]any{"containers": []any{nil, map[string]any{}, map[string]any{"x": nil}, map[string]any{"name": "c"}}}},
		map[string]any{"a": nil}, []any{nil}, map[string]any{}, []any{},
		[]any{map[string]any{"name": "a", "replicas": float64(2)}, map[string]any{"name": "b", "replicas": 1.5}},
		map[string]any{"metadata": map[string]any{"creationTimestamp": "2024-01-02T03:04:05Z", "labels": map[string]any{"\xff": "x"}}},
		map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"ports": []any{map[string]any{"containerPort": int64(80)}}}}}},
		map[string]any{"resourceRequest": map[string]any{"cpu": int64(2), "memory": 1e21, "x": true}},
	}
	for i := range 1500 + len(fixed) {
		var src any
		what := ""
		if i < len(fixed) {
			src, what = fixed[i], fmt.Sprintf("fixed %d", i)
		} else {
			target := typedTargets[i%len(typedTargets)]
			g := typedGen{L: L, rng: rng, hostile: i%3 == 0}
			lv := g.value(reflect.TypeOf(target.new()).Elem(), 0)
			if _, ok := lv.(*lua.LTable); !ok {
				continue
			}
			src, what = luaToGo(L, rng, lv), fmt.Sprintf("random %d (%s)", i, target.name)
		}
		for _, target := range typedTargets {
			lv, err := Lazy(L, src)
			require.NoError(t, err)
			want, _, wantErr := sameAsText(t, L, lv, target, what)
			alone := target.new()
			if decodeTypedGo(src, reflect.ValueOf(alone)) {
				require.NoError(t, wantErr, "%s into %s: decoded where encoding/json fails", what, target.name)
				assert.Equal(t, want, alone, "%s into %s", what, target.name)
				direct[target.name]++
			} else {
				assert.True(t, reflect.ValueOf(alone).Elem().IsZero(), "%s into %s: a declined decode left its target zero", what, target.name)
			}
			luaapi.EndLazy(L)
		}
	}
	t.Logf("Go value decodes: %v", direct)
	for _, name := range []string{"ReplicaRequirements", "[]Component", "[]DependentObjectReference", "PodTemplateSpec", "plainOdd", "map"} {
		assert.Greater(t, direct[name], 20, "the Go value route decoded into %s", name)
	}
}
