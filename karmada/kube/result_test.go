package kube

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kartalua/karta/internal/testobj"
	"github.com/kartalua/karta/luaapi"
)

// TestKubeResultGenericIsTheJSONRoundTrip: the helpers' results built
// without the text are the round trip's values — every field of the
// result types filled at random (nil, empty and set; quantities in every
// format; tolerationSeconds beyond 2^53), the results of real templates,
// nils — and a string that is not valid UTF-8 declines.
func TestKubeResultGenericIsTheJSONRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	check := func(v any, what string) {
		g, ok := kubeResultGeneric(v)
		want := testobj.JSONRoundTrip(t, v)
		if !ok {
			// Declines only for invalid UTF-8, which the text replaces.
			data, _ := json.Marshal(v)
			assert.Contains(t, string(data), `\ufffd`, "%s declined", what)
			return
		}
		assert.Equal(t, want, g, what)
	}
	declined := 0
	for i := range 2000 {
		var v any
		if i%2 == 0 {
			r := &kubeReplicaRequirements{}
			fillRandom(rng, reflect.ValueOf(r).Elem(), 0)
			v = r
		} else {
			var deps []kubeDependency
			fillRandom(rng, reflect.ValueOf(&deps).Elem(), 0)
			v = deps
		}
		if _, ok := kubeResultGeneric(v); !ok {
			declined++
		}
		check(v, "random")
	}
	assert.Less(t, declined, 1000, "most random results are built directly")
	check((*kubeReplicaRequirements)(nil), "nil requirements")
	check([]kubeDependency(nil), "nil dependencies")
	check([]kubeDependency{}, "no dependencies")
	check(&kubeReplicaRequirements{NodeClaim: &kubeNodeClaim{HardNodeAffinity: &corev1.NodeSelector{}}}, "null terms")
	seconds := int64(1<<53 + 1)
	check(&kubeReplicaRequirements{NodeClaim: &kubeNodeClaim{Tolerations: []corev1.Toleration{{TolerationSeconds: &seconds}}}}, "seconds beyond 2^53")
	_, ok := kubeResultGeneric(&kubeReplicaRequirements{NodeClaim: &kubeNodeClaim{NodeSelector: map[string]string{"a": "\xff"}}})
	assert.False(t, ok, "invalid UTF-8 declines")
	_, ok = kubeResultGeneric(struct{}{})
	assert.False(t, ok, "another type declines")

	// The results of pod templates, through the helpers.
	for i := range 300 {
		tmpl := &corev1.PodTemplateSpec{}
		fillRandom(rng, reflect.ValueOf(&tmpl.Spec.Containers).Elem(), 0)
		fillRandom(rng, reflect.ValueOf(&tmpl.Spec.InitContainers).Elem(), 0)
		fillRandom(rng, reflect.ValueOf(&tmpl.Spec.Affinity).Elem(), 0)
		fillRandom(rng, reflect.ValueOf(&tmpl.Spec.Tolerations).Elem(), 0)
		fillRandom(rng, reflect.ValueOf(&tmpl.Spec.NodeSelector).Elem(), 0)
		fillRandom(rng, reflect.ValueOf(&tmpl.Spec.Volumes).Elem(), 0)
		fillRandom(rng, reflect.ValueOf(&tmpl.Spec.ServiceAccountName).Elem(), 0)
		check(podRequirements(tmpl), fmt.Sprintf("requirements of template %d", i))
		check(podDependencies(&tmpl.Spec, "ns"), fmt.Sprintf("dependencies of template %d", i))
	}
}

// TestKubeHelpersPushTheRoundTrip: what the helpers push is the table
// Value makes of the round trip.
func TestKubeHelpersPushTheRoundTrip(t *testing.T) {
	L := luaapi.NewState(luaapi.SandboxOptions{Modules: luaapi.Loaders(Module)})
	defer L.Close()
	res := mustRun(t, L, `local kube = require("kube")
		local t = {spec={nodeSelector={zone="a"}, tolerations={{key="k", operator="Exists", tolerationSeconds=30}},
			serviceAccountName="sa", volumes={{name="v", configMap={name="cm"}}},
			containers={{name="c", resources={limits={cpu="1", memory="1Gi"}}, env={{name="E", valueFrom={secretKeyRef={name="s", key="k"}}}}}}}}
		return kube.accuratePodRequirements(t), kube.getPodDependencies(t, "ns")`)
	for i, want := range []any{
		map[string]any{"nodeClaim": map[string]any{"nodeSelector": map[string]any{"zone": "a"},
			"tolerations": []any{map[string]any{"key": "k", "operator": "Exists", "tolerationSeconds": float64(30)}}},
			"resourceRequest": map[string]any{"cpu": "1", "memory": "1Gi"}},
		[]any{
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "ns", "name": "cm"},
			map[string]any{"apiVersion": "v1", "kind": "Secret", "namespace": "ns", "name": "s"},
			map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "namespace": "ns", "name": "sa"},
		},
	} {
		wantLV, err := Value(L, want)
		require.NoError(t, err)
		assert.Equal(t, luaDump(L, wantLV), luaDump(L, res[i]), "result %d", i)
	}
}

// luaDump prints a Lua value with sorted keys, for comparing tables.
func luaDump(L *lua.LState, lv lua.LValue) string {
	data, err := encodeKubeJSON(L, lv)
	if err != nil {
		return "error: " + err.Error()
	}
	return string(data)
}

var randomStrings = []string{"", "a", "k", "In", "Exists", "NoSchedule", "x<y>&", "é", "\xff", "nvidia.com/gpu", "hugepages-2Mi", "cpu", "memory"}

// fillRandom fills v (settable) with random values of its type: strings
// from randomStrings, numbers, pointers, slices and maps nil, empty or
// set, quantities of every format.
func fillRandom(rng *rand.Rand, v reflect.Value, depth int) {
	if v.Type() == reflect.TypeFor[resource.Quantity]() {
		q := resource.MustParse([]string{"500m", "1", "1Gi", "1.5", "2e3", "100Mi", "0", "1Ki"}[rng.IntN(8)])
		v.Set(reflect.ValueOf(q))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(randomStrings[rng.IntN(len(randomStrings))])
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := []int64{0, 1, 30, -5, 1<<53 + 1, 1 << 62}[rng.IntN(6)]
		if !v.OverflowInt(n) {
			v.SetInt(n)
		}
	case reflect.Pointer:
		if depth > 5 || rng.IntN(3) == 0 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fillRandom(rng, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		if depth > 5 || rng.IntN(4) == 0 {
			return
		}
		n := rng.IntN(3)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fillRandom(rng, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		if depth > 5 || rng.IntN(4) == 0 {
			return
		}
		m := reflect.MakeMap(v.Type())
		for range rng.IntN(3) {
			k := reflect.New(v.Type().Key()).Elem()
			fillRandom(rng, k, depth+1)
			e := reflect.New(v.Type().Elem()).Elem()
			fillRandom(rng, e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && rng.IntN(2) == 0 {
				fillRandom(rng, v.Field(i), depth+1)
			}
		}
	}
}

// TestKubeModuleAgreesWithKubeTextModule: the helpers without the text
// give what Karmada's route through the text gives, results and errors,
// on templates the corpus's scripts pass and on hostile ones.
func TestModuleAgreesWithTextModule(t *testing.T) {
	newState := func(module luaapi.Module) *lua.LState {
		return luaapi.NewState(luaapi.SandboxOptions{Modules: luaapi.Loaders(module)})
	}
	fast, text := newState(Module), newState(TextModule)
	defer fast.Close()
	defer text.Close()
	templates := []string{
		`{spec={containers={{name="c", resources={limits={cpu="1", memory="512Mi"}, requests={cpu="500m"}}}}}}`,
		`{spec={nodeSelector={zone="a"}, tolerations={{key="k", operator="Exists", effect="NoSchedule", tolerationSeconds=30}},
			affinity={nodeAffinity={requiredDuringSchedulingIgnoredDuringExecution={nodeSelectorTerms={{matchExpressions={{key="a", operator="In", values={"x"}}}}}}}},
			containers={{name="c", envFrom={{configMapRef={name="cm"}}, {secretRef={name="s"}}}, env={{name="E", valueFrom={configMapKeyRef={name="cm2", key="k"}}}}}},
			initContainers={{name="i", resources={requests={cpu="2", ["nvidia.com/gpu"]=1}}}},
			volumes={{name="v", persistentVolumeClaim={claimName="pvc"}}, {name="w", secret={secretName="sec"}}, {name="x", configMap={name="cm3"}}},
			imagePullSecrets={{name="pull"}}, serviceAccountName="sa", overhead={cpu="100m"}}}`,
		`{metadata={labels={a="b"}}, spec={containers={}}}`,
		`{}`,
		`{spec={containers={{resources={limits={cpu="bad"}}}}}}`,
		`{spec={containers={{resources={limits={cpu=true}}}}}}`,
		`{spec={containers={{Name="c", RESOURCES={limits={cpu="1"}}}}}}`,
		`{spec={containers={{name=3}}}}`,
		`{spec={tolerations={{tolerationSeconds=1.5}}}}`,
		`{spec={nodeSelector={["\255"]="x"}}}`,
		`{spec={nodeSelector={a="\255"}}}`,
		`{spec={serviceAccountName="\255"}}`,
		`{spec={containers={{resources={limits={["hugepages-2Mi"]="1Gi", ["example.com/foo"]=3, ["kubernetes.io/x"]="1"}}}}}}`,
		`{1, 2}`,
		`{[1]=1, [3]=3}`,
	}
	for _, tmpl := range templates {
		for _, call := range []string{`kube.accuratePodRequirements(t)`, `kube.getPodDependencies(t, "ns")`, `kube.getPodDependencies(t, nil)`} {
			src := "local kube = require(\"kube\")\nlocal t = " + tmpl + "\nreturn " + call
			fastRes, fastErr := runIn(t, fast, src)
			textRes, textErr := runIn(t, text, src)
			if textErr != nil {
				require.Error(t, fastErr, src)
				assert.Equal(t, textErr.Error(), fastErr.Error(), src)
				continue
			}
			require.NoError(t, fastErr, src)
			assert.Equal(t, luaDump(text, textRes[0]), luaDump(fast, fastRes[0]), src)
		}
	}
}

// The helpers' results reach the script as lazy tables: untouched, they
// are read from Go (an untouched requirements table is decoded without
// tables); read, written and iterated by a script, they are the tables
// Value makes.
func TestKubeHelperResultsAreLazy(t *testing.T) {
	L := luaapi.NewState(luaapi.SandboxOptions{Modules: luaapi.Loaders(Module)})
	defer L.Close()
	defer luaapi.EndLazy(L)
	tmpl := `{spec={nodeSelector={zone="a", disk="ssd"}, serviceAccountName="sa",
		containers={{name="c", resources={limits={cpu="1", memory="1Gi"}}}}}}`
	res := mustRun(t, L, `local kube = require("kube")
		return kube.accuratePodRequirements(`+tmpl+`), kube.getPodDependencies(`+tmpl+`, "ns")`)
	for i, r := range res {
		_, lazy := luaapi.LazySource(L, r.(*lua.LTable))
		assert.True(t, lazy, "result %d", i)
	}
	var req kubeReplicaRequirements
	require.NoError(t, Unmarshal(L, res[0], &req))
	assert.Equal(t, "1", req.ResourceRequest.Cpu().String())
	assert.Equal(t, map[string]string{"zone": "a", "disk": "ssd"}, req.NodeClaim.NodeSelector)

	script := `local kube = require("kube")
		local r = kube.accuratePodRequirements(` + tmpl + `)
		local out = {}
		for k, v in pairs(r.nodeClaim.nodeSelector) do out[#out+1] = k .. "=" .. v end
		r.nodeClaim.nodeSelector.zone = nil
		r.resourceRequest.cpu = "2"
		local d = kube.getPodDependencies(` + tmpl + `, "ns")
		table.insert(d, {kind = "X"})
		out[#out+1] = #d .. d[1].kind
		return table.concat(out, ","), r, d`
	text := luaapi.NewState(luaapi.SandboxOptions{Modules: luaapi.Loaders(TextModule)})
	defer text.Close()
	got := mustRun(t, L, script)
	want := mustRun(t, text, script)
	require.Len(t, got, 3)
	for i := range want {
		assert.Equal(t, luaDump(text, want[i]), luaDump(L, got[i]), "result %d", i)
	}
}
