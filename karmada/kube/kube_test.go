package kube

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
)

// kubeState is a sandbox with the kube module, as the karmada package
// builds it.
func kubeState(t *testing.T) *lua.LState {
	t.Helper()
	L := luaapi.NewState(luaapi.SandboxOptions{Modules: luaapi.Loaders(Module)})
	t.Cleanup(L.Close)
	return L
}

// kubeJSON runs src (a chunk returning one value) and prints the value as
// Karmada's encoder does (sorted keys), or "nil".
func kubeJSON(t *testing.T, L *lua.LState, src string) string {
	t.Helper()
	res := mustRun(t, L, "local kube = require('kube')\n"+src)
	require.Len(t, res, 1)
	if res[0] == lua.LNil {
		return "nil"
	}
	b, err := encodeKubeJSON(L, res[0])
	require.NoError(t, err)
	return string(b)
}

// The expected values below were worked out by hand from Karmada's code
// (util.Resource, helper.GenerateReplicaRequirements, resource.Quantity's
// canonical forms).

func TestKubeResourceAdd(t *testing.T) {
	L := kubeState(t)
	for _, tc := range []struct{ args, want string }{
		{`"500m", "1"`, "1500m"},
		{`"1Gi", "512Mi"`, "1536Mi"},
		{`"1.5", "500m"`, "2"},
		{`nil, "250m"`, "250m"},
		{``, "0"},
		{`"100Mi"`, "100Mi"},
	} {
		res := mustRun(t, L, "return kube.resourceAdd("+tc.args+")")
		assert.Equal(t, tc.want, res[0].String(), tc.args)
	}
	for _, tc := range []struct{ args, want string }{
		{`1`, "string expected, got number"},
		{`"lots"`, "cannot parse 'lots'"},
		{`{}`, "string expected, got table"},
	} {
		_, err := runIn(t, L, "return kube.resourceAdd("+tc.args+")")
		require.Error(t, err, tc.args)
		assert.Contains(t, err.Error(), tc.want)
	}
	// A bad quantity is an ordinary error: pcall catches it, as gopher-lua's
	// recovered MustParse panic is caught in Karmada.
	res := mustRun(t, L, `local ok, err = pcall(kube.resourceAdd, "lots") return ok, err`)
	assert.Equal(t, lua.LFalse, res[0])
	assert.Contains(t, res[1].String(), "cannot parse 'lots'")
}

func TestKubeGetResourceQuantity(t *testing.T) {
	L := kubeState(t)
	for _, tc := range []struct {
		arg  string
		want float64
	}{
		{`"500m"`, 0.5},
		{`"1"`, 1},
		{`"1.5"`, 1.5},
		{`"1Gi"`, 1073741824},
		{`"2k"`, 2000},
		{`nil`, 0},
	} {
		res := mustRun(t, L, "return kube.getResourceQuantity("+tc.arg+")")
		assert.Equal(t, lua.LNumber(tc.want), res[0], tc.arg)
	}
	for _, tc := range []struct{ args, want string }{
		{`"-1"`, "negative value"},
		{`"1", "2"`, "only accepts one argument"},
		{``, "only accepts one argument"},
		{`5`, "string expected, got number"},
	} {
		_, err := runIn(t, L, "return kube.getResourceQuantity("+tc.args+")")
		require.Error(t, err, tc.args)
		assert.Contains(t, err.Error(), tc.want, tc.args)
	}
}

func TestKubeAccuratePodRequirements(t *testing.T) {
	L := kubeState(t)
	for _, tc := range []struct {
		name, template, want string
	}{
		{"requests", `{spec={containers={{name="a", resources={requests={cpu="500m", memory="1Gi"}}}}}}`,
			`{"resourceRequest":{"cpu":"500m","memory":"1Gi"}}`},
		{"limits only: requests default to limits", `{spec={containers={{name="a", resources={limits={cpu="2", memory="4Gi"}}}}}}`,
			`{"resourceRequest":{"cpu":"2","memory":"4Gi"}}`},
		{"a limit fills only the requests it lacks", `{spec={containers={{name="a", resources={requests={cpu="250m"}, limits={cpu="1", memory="512Mi"}}}}}}`,
			`{"resourceRequest":{"cpu":"250m","memory":"512Mi"}}`},
		{"summed over containers", `{spec={containers={
			{name="a", resources={requests={cpu="500m", memory="1Gi"}}},
			{name="b", resources={requests={cpu="1.5", memory="512Mi"}}}}}}`,
			`{"resourceRequest":{"cpu":"2","memory":"1536Mi"}}`},
		{"init containers raise each resource to their max", `{spec={
			containers={{name="a", resources={requests={cpu="1", memory="1Gi"}}}},
			initContainers={{name="i1", resources={requests={cpu="2", memory="256Mi"}}},
			                {name="i2", resources={limits={cpu="500m", memory="2Gi"}}}}}}`,
			`{"resourceRequest":{"cpu":"2","memory":"2Gi"}}`},
		{"overhead is added", `{spec={containers={{name="a", resources={requests={cpu="1"}}}}, overhead={cpu="250m", memory="120Mi"}}}`,
			`{"resourceRequest":{"cpu":"1250m","memory":"120Mi"}}`},
		{"fractions round up", `{spec={containers={{name="a", resources={requests={cpu="0.0001", memory="1.5"}}}}}}`,
			`{"resourceRequest":{"cpu":"1m","memory":"2"}}`},
		{"extended and huge page resources; unknown native names are ignored", `{spec={containers={{name="a", resources={requests={
			["nvidia.com/gpu"]="1", ["hugepages-2Mi"]="1Gi", example="3", ["ephemeral-storage"]="10Gi"}}}}}}`,
			`{"resourceRequest":{"ephemeral-storage":"10Gi","hugepages-2Mi":"1Gi","nvidia.com/gpu":"1"}}`},
		{"node claim from selector, tolerations and required affinity", `{spec={
			nodeSelector={disk="ssd"},
			tolerations={{key="k", operator="Exists", effect="NoSchedule", tolerationSeconds=300}},
			affinity={nodeAffinity={requiredDuringSchedulingIgnoredDuringExecution={nodeSelectorTerms={
				{matchExpressions={{key="zone", operator="In", values={"a"}}}}}}}},
			containers={{name="a"}}}}`,
			`{"nodeClaim":{"hardNodeAffinity":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]}]},` +
				`"nodeSelector":{"disk":"ssd"},"tolerations":[{"effect":"NoSchedule","key":"k","operator":"Exists","tolerationSeconds":300}]}}`},
		{"preferred affinity is no claim", `{spec={affinity={nodeAffinity={preferredDuringSchedulingIgnoredDuringExecution={
			{weight=1, preference={matchExpressions={{key="zone", operator="In", values={"a"}}}}}}}}, containers={{name="a"}}}}`,
			`nil`},
		{"an empty node selector is dropped, so no claim", `{spec={nodeSelector={}, containers={{name="a", resources={}}}}}`, `nil`},
		{"empty template", `{}`, `nil`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, kubeJSON(t, L, "return kube.accuratePodRequirements("+tc.template+")"))
		})
	}
	for _, tc := range []struct{ args, want string }{
		{``, "only accepts one argument"},
		{`{}, {}`, "only accepts one argument"},
		{`"pod"`, "table expected"},
		{`{spec={containers="x"}}`, "PodTemplateSpec"},
	} {
		_, err := runIn(t, L, "local kube = require('kube') return kube.accuratePodRequirements("+tc.args+")")
		require.Error(t, err, tc.args)
		assert.Contains(t, err.Error(), tc.want, tc.args)
	}
}

// A lazy view (karta's generated hooks pass one) reads as the table it
// stands for.
func TestKubeAccuratePodRequirementsOfAView(t *testing.T) {
	L := kubeState(t)
	tmpl := map[string]any{"spec": map[string]any{
		"nodeSelector": map[string]any{},
		"containers": []any{map[string]any{"name": "a", "resources": map[string]any{
			"limits": map[string]any{"cpu": "1", "memory": "1Gi"}}}},
	}}
	fn := L.NewFunction(func(L *lua.LState) int {
		L.Push(luaapi.ToLuaView(L, tmpl))
		return 1
	})
	env := luaapi.NewEnv(L)
	env.RawSetString("template", fn)
	proto, err := luaapi.Compile(testChunk, "return kube.accuratePodRequirements(template())")
	require.NoError(t, err)
	res, err := luaapi.CallProtected(t.Context(), L, testTimeout, luaapi.Instantiate(L, proto, env), 1)
	require.NoError(t, err)
	b, err := encodeKubeJSON(L, res[0])
	require.NoError(t, err)
	assert.Equal(t, `{"resourceRequest":{"cpu":"1","memory":"1Gi"}}`, string(b))
}

func TestKubeGetPodDependencies(t *testing.T) {
	L := kubeState(t)
	const template = `{spec={
		serviceAccountName="runner",
		imagePullSecrets={{name="pull"}},
		initContainers={{name="i", envFrom={{configMapRef={name="cm-init"}}},
			env={{name="E", valueFrom={secretKeyRef={name="sec-init", key="k"}}}}}},
		containers={{name="c",
			env={{name="A", valueFrom={configMapKeyRef={name="cm-env", key="k"}}},
			     {name="B", valueFrom={configMapKeyRef={name="cm-env", key="other"}}}},
			envFrom={{secretRef={name="sec-envfrom"}}}}},
		ephemeralContainers={{name="e", envFrom={{configMapRef={name="cm-eph"}}}}},
		volumes={
			{name="v1", configMap={name="cm-vol"}},
			{name="v2", secret={secretName="sec-vol"}},
			{name="v3", projected={sources={{configMap={name="cm-proj"}}, {secret={name="sec-proj"}}}}},
			{name="v4", csi={driver="d", nodePublishSecretRef={name="sec-csi"}}},
			{name="v5", cephfs={monitors={"m"}, secretRef={name="sec-ceph"}}},
			{name="v6", persistentVolumeClaim={claimName="data"}},
			{name="v7", azureFile={secretName="sec-azure", shareName="s"}},
			{name="v8", rbd={monitors={"m"}, image="i", secretRef={name="sec-rbd"}}},
			{name="v9", cinder={volumeID="x", secretRef={name="sec-cinder"}}},
			{name="v10", persistentVolumeClaim={claimName="data"}}}}}`
	dep := func(kind, name, ns string) string {
		return `{"apiVersion":"v1","kind":"` + kind + `","name":"` + name + `","namespace":"` + ns + `"}`
	}
	want := "["
	for i, d := range [][2]string{
		{"ConfigMap", "cm-env"}, {"ConfigMap", "cm-eph"}, {"ConfigMap", "cm-init"}, {"ConfigMap", "cm-proj"}, {"ConfigMap", "cm-vol"},
		{"Secret", "pull"}, {"Secret", "sec-azure"}, {"Secret", "sec-ceph"}, {"Secret", "sec-cinder"}, {"Secret", "sec-csi"},
		{"Secret", "sec-envfrom"}, {"Secret", "sec-init"}, {"Secret", "sec-proj"}, {"Secret", "sec-rbd"}, {"Secret", "sec-vol"},
		{"ServiceAccount", "runner"}, {"PersistentVolumeClaim", "data"},
	} {
		if i > 0 {
			want += ","
		}
		want += dep(d[0], d[1], "ns")
	}
	want += "]"
	assert.Equal(t, want, kubeJSON(t, L, "return kube.getPodDependencies("+template+", 'ns')"))

	for _, tc := range []struct{ name, call, want string }{
		{"nil namespace is default", `kube.getPodDependencies({spec={serviceAccountName="sa"}}, nil)`,
			"[" + dep("ServiceAccount", "sa", "default") + "]"},
		{"a number namespace is a string", `kube.getPodDependencies({spec={serviceAccountName="sa"}}, 7)`,
			"[" + dep("ServiceAccount", "sa", "7") + "]"},
		{"the default service account is no dependency", `kube.getPodDependencies({spec={serviceAccountName="default"}}, "ns")`, "nil"},
		{"no dependencies is nil", `kube.getPodDependencies({spec={containers={{name="c"}}}}, "ns")`, "nil"},
		{"only the first secret source of a volume counts", `kube.getPodDependencies({spec={volumes={{name="v", secret={secretName="s"}, csi={driver="d", nodePublishSecretRef={name="csi"}}}}}}, "ns")`,
			"[" + dep("Secret", "s", "ns") + "]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, kubeJSON(t, L, "return "+tc.call))
		})
	}
	for _, tc := range []struct{ args, want string }{
		{`{}`, "only accepts two argument"},
		{`{}, "a", "b"`, "only accepts two argument"},
		{`{}, {}`, "string expected, got table"},
	} {
		_, err := runIn(t, L, "local kube = require('kube') return kube.getPodDependencies("+tc.args+")")
		require.Error(t, err, tc.args)
		assert.Contains(t, err.Error(), tc.want, tc.args)
	}
}
