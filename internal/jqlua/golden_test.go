package jqlua

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// goldenCases pin the generated Lua of representative expressions: it must
// stay readable, and any change to it shows in review.
var goldenCases = []struct{ name, expr string }{
	{"jobset_ids", `.spec.replicatedJobs[]?.name`},
	{"jobset_replicas", `(.replicas // 1) * (.template.spec.parallelism // 1)`},
	{"pytorch_initializing", `[.status.conditions[]? | select(.status == "True" and .type != "Created")] | length`},
	{"pytorch_label", `.metadata.labels["training.kubeflow.org/replica-type"]`},
	{"kserve_predictor", `.spec.predictor | first((.model | select(. != null)), (.[]? | select(type == "object" and has("storageUri"))), .model)`},
	{"dynamo_ids", `.spec.services // {} | keys[]`},
	{"lws_template", `.spec.leaderWorkerTemplate | (.leaderTemplate // .workerTemplate)`},
	{"milvus_guard", `select(.spec.mode == "cluster") | "querynode"`},
	{"nim_image", `.spec.image.repository + ":" + .spec.image.tag`},
	{"object_stream", `{name: .metadata.name, port: (.spec.ports[]?.port // "none")}`},
	{"try_catch", `try (.spec.replicas | tonumber) catch "bad: \(.)"`},
	{"comma_alt", `(.a, .b[]) // "none" | tostring`},
	// a binding: each clique a local, read inside the groups' loop
	{"podcliqueset_replicas", `.spec.template | .cliques[]? as $c | $c.name as $n | ($c.spec.replicas // 1) * ([.podCliqueScalingGroups[]? | select((.cliqueNames - [$n] | length) < (.cliqueNames | length)) | .replicas // 1][0] // 1)`},
	{"carrier_objects", `{r: ., i: (.spec.items // [] | keys[])} | {c: .r.spec.items[.i], i: .i} | "\(.c.name)/\(.i)"`},
	{"memory_elif", `.memory | ascii_downcase | if endswith("gi") then (rtrimstr("gi") | tonumber * 1024) elif endswith("mi") then (rtrimstr("mi") | tonumber) elif . == "" then null elif .[0:1] == "x" then 0 else tonumber end`},
}

func TestGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			u := NewPortableUnit()
			_, err := u.Add(c.expr)
			require.NoError(t, err)
			got := u.Lua()
			require.NoError(t, checkLua(got))
			path := filepath.Join("testdata", "golden", c.name+".lua")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./jqlua -run TestGolden -update")
			assert.Equal(t, string(want), got)
		})
	}
}
