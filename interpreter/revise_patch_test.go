package interpreter

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// patchCase is one ReviseSpec call with typed revisions: the operations
// and warnings it yields, or every error line it reports.
type patchCase struct {
	name     string
	revs     string
	ops      string
	warnings []string
	errs     []string
}

func runPatchCases(t *testing.T, m *model, fixture func(t testing.TB) map[string]any, cases []patchCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, ops, warnings, err := checkedReviseWarnings(t, m, fixture(t), revisionsFrom(t, tc.revs))
			if tc.errs != nil {
				require.Error(t, err)
				assert.Equal(t, tc.errs, errorLines(t, err))
				return
			}
			require.NoError(t, err)
			assertOps(t, tc.ops, ops)
			var got []string
			for _, w := range warnings {
				got = append(got, w.String())
			}
			assert.Equal(t, tc.warnings, got)
		})
	}
}

// builtinModel compiles ../builtin/kartas/NAME.yaml; builtinObject reads
// ../examples/NAME/STATE.yaml.
func builtinModel(t testing.TB, name string) *model {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "builtin", "kartas", name+".yaml"))
	require.NoError(t, err)
	return modelFrom(t, string(data))
}

func builtinObject(name, state string) func(t testing.TB) map[string]any {
	return func(t testing.TB) map[string]any {
		t.Helper()
		data, err := os.ReadFile(filepath.Join("..", "examples", name, state+".yaml"))
		require.NoError(t, err)
		return objectFrom(t, string(data))
	}
}

// The case: bumping the image of the built-in PyTorchJob's
// worker. A merge patch replaces the containers list, so the container
// loses everything the patch does not repeat, with a warning; a strategic
// one merges by name and writes the image alone.
func TestReviseSpecPatchTypesPyTorchJob(t *testing.T) {
	const w = "/spec/pytorchReplicaSpecs/Worker/template"
	const image = "123456789012.dkr.ecr.us-east-1.amazonaws.com/nlp/sft-trainer:1.9.0"
	runPatchCases(t, builtinModel(t, "pytorchjob"), builtinObject("pytorchjob", "running"), []patchCase{{
		name: "strategic: the image changes, the rest of the container stays",
		revs: `
- component: worker
  type: strategic
  patch: {spec: {containers: [{name: pytorch, image: "` + image + `"}]}}`,
		ops: `
- {op: replace, path: ` + w + `/spec/containers/0/image, value: "` + image + `"}`,
	}, {
		name: "merge: the list is replaced, and the warning names what goes",
		revs: `
- component: worker
  patch: {spec: {containers: [{name: pytorch, image: "` + image + `"}]}}`,
		ops: `
- {op: remove, path: ` + w + `/spec/containers/0/args}
- {op: remove, path: ` + w + `/spec/containers/0/command}
- {op: replace, path: ` + w + `/spec/containers/0/image, value: "` + image + `"}
- {op: remove, path: ` + w + `/spec/containers/0/ports}
- {op: remove, path: ` + w + `/spec/containers/0/resources}
- {op: remove, path: ` + w + `/spec/containers/0/volumeMounts}`,
		warnings: []string{`revisions[0] (component "worker", instance ""): spec.containers[pytorch]: a merge patch replaces the whole list, ` +
			`dropping args, command, ports, resources, volumeMounts; use type: strategic to merge by name`},
	}, {
		name: "merge: a whole container given again drops nothing and warns of nothing",
		revs: `
- component: master
  type: merge
  patch:
    spec:
      containers:
      - name: pytorch
        image: "` + image + `"
        command: [torchrun]
        args: [--nnodes=4, --nproc-per-node=8, /workspace/sft.py, --model=mistralai/Mistral-7B-v0.3, --output=/checkpoints]
        ports: [{name: pytorchjob-port, containerPort: 23456, protocol: TCP}]
        resources:
          requests: {cpu: "90", memory: 900Gi, nvidia.com/gpu: "8"}
          limits: {memory: 900Gi, nvidia.com/gpu: "8"}
        volumeMounts:
        - {name: checkpoints, mountPath: /checkpoints}
        - {name: dshm, mountPath: /dev/shm}`,
		ops: `
- {op: replace, path: /spec/pytorchReplicaSpecs/Master/template/spec/containers/0/image, value: "` + image + `"}`,
	}, {
		name: "merge: nested lists merged by key and whole elements are named",
		revs: `
- component: worker
  patch:
    spec:
      containers:
      - name: pytorch
        image: "` + image + `"
        command: [torchrun]
        args: [--nnodes=4]
        ports: [{containerPort: 23456}]
        resources: {limits: {memory: 900Gi, nvidia.com/gpu: "8"}}
        volumeMounts: [{name: checkpoints, mountPath: /checkpoints}]
      volumes: [{name: checkpoints, persistentVolumeClaim: {claimName: other}}]`,
		ops: `
- {op: replace, path: ` + w + `/spec/containers/0/args, value: [--nnodes=4]}
- {op: replace, path: ` + w + `/spec/containers/0/image, value: "` + image + `"}
- {op: remove, path: ` + w + `/spec/containers/0/ports/0/name}
- {op: remove, path: ` + w + `/spec/containers/0/ports/0/protocol}
- {op: remove, path: ` + w + `/spec/containers/0/resources/requests}
- {op: replace, path: ` + w + `/spec/containers/0/volumeMounts, value: [{name: checkpoints, mountPath: /checkpoints}]}
- {op: replace, path: ` + w + `/spec/volumes, value: [{name: checkpoints, persistentVolumeClaim: {claimName: other}}]}`,
		warnings: []string{
			`revisions[0] (component "worker", instance ""): spec.containers[pytorch]: a merge patch replaces the whole list, ` +
				`dropping ports[23456].name, ports[23456].protocol, resources.requests, volumeMounts[/dev/shm]; use type: strategic to merge by name`,
			`revisions[0] (component "worker", instance ""): spec.volumes[dshm]: a merge patch replaces the whole list, ` +
				`dropping the whole element; use type: strategic to merge by name`,
		},
	}, {
		name: "strategic: an env var added to one container, a port merged by containerPort",
		revs: `
- component: worker
  type: strategic
  patch:
    spec:
      containers:
      - name: pytorch
        env: [{name: NCCL_DEBUG, value: INFO}]
        ports: [{containerPort: 23456, name: torch}]`,
		ops: `
- {op: add, path: ` + w + `/spec/containers/0/env, value: [{name: NCCL_DEBUG, value: INFO}]}
- {op: replace, path: ` + w + `/spec/containers/0/ports/0/name, value: torch}`,
	}, {
		name: "strategic: a volume added, and the list keeps its elements (new ones first, as kubectl)",
		revs: `
- component: worker
  type: strategic
  patch:
    spec:
      volumes: [{name: hf-cache, emptyDir: {}}]
      containers: [{name: pytorch, volumeMounts: [{name: hf-cache, mountPath: /root/.cache/huggingface}]}]`,
		ops: `
- op: replace
  path: ` + w + `/spec/containers/0/volumeMounts
  value:
  - {name: hf-cache, mountPath: /root/.cache/huggingface}
  - {name: checkpoints, mountPath: /checkpoints}
  - {name: dshm, mountPath: /dev/shm}
- op: replace
  path: ` + w + `/spec/volumes
  value:
  - {name: hf-cache, emptyDir: {}}
  - {name: checkpoints, persistentVolumeClaim: {claimName: mistral-7b-sft-checkpoints}}
  - {name: dshm, emptyDir: {medium: Memory, sizeLimit: 128Gi}}`,
	}, {
		name: "strategic: $patch: delete removes an element by its key",
		revs: `
- component: worker
  type: strategic
  patch:
    spec:
      volumes: [{name: dshm, $patch: delete}]
      containers: [{name: pytorch, volumeMounts: [{mountPath: /dev/shm, $patch: delete}]}]`,
		ops: `
- {op: replace, path: ` + w + `/spec/containers/0/volumeMounts, value: [{name: checkpoints, mountPath: /checkpoints}]}
- {op: replace, path: ` + w + `/spec/volumes, value: [{name: checkpoints, persistentVolumeClaim: {claimName: mistral-7b-sft-checkpoints}}]}`,
	}, {
		name: "strategic: $patch: replace replaces a map, null removes a key",
		revs: `
- component: master
  type: strategic
  patch:
    metadata:
      annotations: {$patch: replace, example.com/owner: nlp}
      labels: {app.kubernetes.io/name: null}
    spec: {nodeSelector: {$patch: delete}}`,
		ops: `
- {op: add, path: /spec/pytorchReplicaSpecs/Master/template/metadata/annotations/example.com~1owner, value: nlp}
- {op: remove, path: /spec/pytorchReplicaSpecs/Master/template/metadata/annotations/sidecar.istio.io~1inject}
- {op: remove, path: /spec/pytorchReplicaSpecs/Master/template/metadata/labels/app.kubernetes.io~1name}
- {op: remove, path: /spec/pytorchReplicaSpecs/Master/template/spec/nodeSelector/node.kubernetes.io~1instance-type}`,
	}, {
		name: "strategic: $patch: replace on a list sets it whole",
		revs: `
- component: worker
  type: strategic
  patch:
    spec:
      containers:
      - name: pytorch
        volumeMounts: [{$patch: replace}, {name: checkpoints, mountPath: /ckpt}]`,
		ops: `
- {op: replace, path: ` + w + `/spec/containers/0/volumeMounts, value: [{name: checkpoints, mountPath: /ckpt}]}`,
	}, {
		name: "strategic: $setElementOrder reorders by key",
		revs: `
- component: worker
  type: strategic
  patch:
    spec:
      $setElementOrder/volumes: [{name: dshm}, {name: checkpoints}]`,
		ops: `
- {op: add, path: ` + w + `/spec/volumes/0/emptyDir, value: {medium: Memory, sizeLimit: 128Gi}}
- {op: replace, path: ` + w + `/spec/volumes/0/name, value: dshm}
- {op: remove, path: ` + w + `/spec/volumes/0/persistentVolumeClaim}
- {op: remove, path: ` + w + `/spec/volumes/1/emptyDir}
- {op: replace, path: ` + w + `/spec/volumes/1/name, value: checkpoints}
- {op: add, path: ` + w + `/spec/volumes/1/persistentVolumeClaim, value: {claimName: mistral-7b-sft-checkpoints}}`,
	}, {
		name: "json: operations with paths into the view",
		revs: `
- component: worker
  type: json
  patch:
  - {op: test, path: /spec/containers/0/name, value: pytorch}
  - {op: replace, path: /spec/containers/0/image, value: "` + image + `"}
  - {op: add, path: /spec/containers/0/env, value: [{name: NCCL_DEBUG, value: INFO}]}
  - {op: remove, path: /metadata/annotations/sidecar.istio.io~1inject}
  - {op: copy, from: /metadata/labels, path: /metadata/annotations/labels-copy}
  - {op: move, from: /metadata/annotations/labels-copy, path: /metadata/annotations/moved}
  - {op: add, path: /spec/tolerations, value: []}
  - {op: add, path: /spec/tolerations/-, value: {key: nvidia.com/gpu, operator: Exists}}`,
		ops: `
- {op: add, path: ` + w + `/metadata/annotations/moved, value: {app.kubernetes.io/name: mistral-7b-sft}}
- {op: remove, path: ` + w + `/metadata/annotations/sidecar.istio.io~1inject}
- {op: add, path: ` + w + `/spec/containers/0/env, value: [{name: NCCL_DEBUG, value: INFO}]}
- {op: replace, path: ` + w + `/spec/containers/0/image, value: "` + image + `"}
- {op: add, path: ` + w + `/spec/tolerations, value: [{key: nvidia.com/gpu, operator: Exists}]}`,
	}, {
		name: "json: a failed test fails the revision, and every revision",
		revs: `
- component: master
  patch: {metadata: {labels: {team: nlp}}}
- component: worker
  type: json
  patch:
  - {op: test, path: /spec/containers/0/image, value: other}
  - {op: replace, path: /spec/containers/0/image, value: "` + image + `"}`,
		errs: []string{`revisions[1] (component "worker", instance ""): patch[0] (test /spec/containers/0/image): testing value /spec/containers/0/image failed: test failed`},
	}, {
		name: "json: RFC 6901 indices only, and add does not create parents",
		revs: `
- component: worker
  type: json
  patch: [{op: replace, path: /spec/containers/-1/image, value: x}]
- component: master
  type: json
  patch: [{op: add, path: /spec/securityContext/runAsUser, value: 1000}]`,
		errs: []string{
			`revisions[0] (component "worker", instance ""): patch[0] (replace /spec/containers/-1/image): replace operation does not apply: doc is missing path: /spec/containers/-1/image: missing value`,
			`revisions[1] (component "master", instance ""): patch[0] (add /spec/securityContext/runAsUser): add operation does not apply: doc is missing path: "/spec/securityContext/runAsUser": missing value`,
		},
	}, {
		name: "malformed revisions name the field",
		revs: `
- component: worker
  type: stratgic
  patch: {spec: {}}
- component: worker
  type: json
  patch: {spec: {}}
- component: worker
  type: strategic
  patch: [{op: add}]
- component: worker
  type: json
  patch: [{op: rplace, path: /spec}]
- component: worker
  type: json
  patch: [{op: add, path: /spec/x}]
- component: worker
  type: json
  patch: [{op: move, path: /spec/x}]
- component: worker
  type: json
  patch: [{op: remove, path: spec/x}]
- component: worker
  type: json
  patch: [{op: remove, path: /spec/a~2b}]
- component: worker
  type: json
  patch: [replace]`,
		errs: []string{
			`revisions[0] (component "worker", instance ""): type: unknown patch type "stratgic" (want merge, strategic or json)`,
			`revisions[1] (component "worker", instance ""): patch must be a list of JSON Patch (RFC 6902) operations over the PodTemplateSpec view, got an object`,
			`revisions[2] (component "worker", instance ""): patch must be an object: a strategic merge patch over the PodTemplateSpec view, got an array`,
			`revisions[3] (component "worker", instance ""): patch[0].op: unknown operation "rplace" (want add, remove, replace, move, copy or test)`,
			`revisions[4] (component "worker", instance ""): patch[0].value: required for add`,
			`revisions[5] (component "worker", instance ""): patch[0].from: required: a JSON pointer into the PodTemplateSpec view, e.g. /spec/containers/0/image`,
			`revisions[6] (component "worker", instance ""): patch[0].path: "spec/x" is not a JSON pointer: it must be empty or start with /`,
			`revisions[7] (component "worker", instance ""): patch[0].path: "/spec/a~2b" is not a JSON pointer: ~ must be followed by 0 or 1`,
			`revisions[8] (component "worker", instance ""): patch[0] must be an operation {op, path, value, from}, got string "replace"`,
		},
	}, {
		name: "strategic problems name the view path",
		revs: `
- component: worker
  type: strategic
  patch: {spec: {containers: [{name: pytorch}, {image: busybox}]}}
- component: worker
  type: strategic
  patch: {spec: {volumes: [{$patch: merge, name: dshm}]}}
- component: worker
  type: strategic
  patch: {spec: {$patch: keep}}
- component: worker
  type: strategic
  patch: {spec: {$replace: [a]}}
- component: worker
  type: strategic
  patch: {spec: {containers: [{name: pytorch, ports: [{name: p}]}]}}
- component: worker
  type: strategic
  patch: {spec: {containers: [pytorch]}}`,
		errs: []string{
			`revisions[0] (component "worker", instance ""): spec.containers[1]: no "name": the elements of spec.containers merge by their "name"`,
			`revisions[1] (component "worker", instance ""): spec.volumes[0].$patch: string "merge" is not a list element directive (want delete or replace)`,
			`revisions[2] (component "worker", instance ""): spec.$patch: string "keep" is not an object directive (want replace or delete)`,
			`revisions[3] (component "worker", instance ""): spec.$replace: unknown directive (want $patch, $retainKeys, $setElementOrder/FIELD or $deleteFromPrimitiveList/FIELD)`,
			`revisions[4] (component "worker", instance ""): spec.containers[0].ports[0]: no "containerPort": the elements of spec.containers[0].ports merge by their "containerPort"`,
			`revisions[5] (component "worker", instance ""): spec.containers[0]: the elements of spec.containers merge by their "name", so each must be an object, not string "pytorch"`,
		},
	}})
}

// poolKarta maps a made-up InferencePool whose main container, sidecars
// and labels are fragments: a strategic patch of spec.containers reaches
// containerPath and containersPath element by element, by name.
const poolKarta = `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: pool}
spec:
  structureDefinition:
    rootComponent:
      name: pool
      kind: {group: example.com, version: v1, kind: InferencePool}
      specDefinition:
        fragmentedPodSpecDefinition:
          containerPath: .spec.server
          containersPath: .spec.sidecars
          labelsPath: .spec.podLabels
          schedulerNamePath: .spec.scheduler
`

const poolObject = `
apiVersion: example.com/v1
kind: InferencePool
metadata: {name: llama, namespace: serving}
spec:
  podLabels: {app: llama}
  server:
    name: vllm
    image: vllm/vllm-openai:v0.6.3
    args: [--model=meta-llama/Llama-3.1-8B-Instruct, --tensor-parallel-size=2]
    env: [{name: HF_HOME, value: /cache}]
    resources: {limits: {nvidia.com/gpu: 2}}
  sidecars:
  - {name: proxy, image: envoyproxy/envoy:v1.31.0}
  - {name: metrics, image: prom/statsd-exporter:v0.27.1, ports: [{containerPort: 9102}]}
`

func TestReviseSpecPatchTypesFragmented(t *testing.T) {
	fixture := func(t testing.TB) map[string]any { return objectFrom(t, poolObject) }
	runPatchCases(t, modelFrom(t, poolKarta), fixture, []patchCase{{
		name: "strategic: the main container and a sidecar, each by name",
		revs: `
- component: pool
  type: strategic
  patch:
    spec:
      containers:
      - {name: metrics, image: prom/statsd-exporter:v0.28.0}
      - {name: vllm, env: [{name: VLLM_LOGGING_LEVEL, value: DEBUG}]}`,
		// As kubectl's, the elements a strategic patch adds come before
		// those it does not name.
		ops: `
- op: replace
  path: /spec/server/env
  value: [{name: VLLM_LOGGING_LEVEL, value: DEBUG}, {name: HF_HOME, value: /cache}]
- {op: replace, path: /spec/sidecars/1/image, value: prom/statsd-exporter:v0.28.0}`,
	}, {
		name: "strategic: a new container goes to containersPath, a deleted one goes from it, the main one stays first",
		revs: `
- component: pool
  type: strategic
  patch:
    spec:
      containers:
      - {name: proxy, $patch: delete}
      - {name: tracer, image: otel/opentelemetry-collector:0.110.0}`,
		// [vllm, proxy, metrics] becomes [vllm, tracer, metrics]: the
		// sidecars keep their length, and change element by element.
		ops: `
- {op: replace, path: /spec/sidecars/0/image, value: otel/opentelemetry-collector:0.110.0}
- {op: replace, path: /spec/sidecars/0/name, value: tracer}`,
	}, {
		name: "strategic: a container added alone comes after the main one",
		revs: `
- component: pool
  type: strategic
  patch: {spec: {containers: [{name: tracer, image: otel/opentelemetry-collector:0.110.0}]}}`,
		ops: `
- op: replace
  path: /spec/sidecars
  value:
  - {name: tracer, image: otel/opentelemetry-collector:0.110.0}
  - {name: proxy, image: envoyproxy/envoy:v1.31.0}
  - {name: metrics, image: prom/statsd-exporter:v0.27.1, ports: [{containerPort: 9102}]}`,
	}, {
		name: "strategic: labels replaced whole through labelsPath",
		revs: `
- component: pool
  type: strategic
  patch: {metadata: {labels: {$patch: replace, team: serving}}, spec: {schedulerName: kai-scheduler}}`,
		ops: `
- {op: remove, path: /spec/podLabels/app}
- {op: add, path: /spec/podLabels/team, value: serving}
- {op: add, path: /spec/scheduler, value: kai-scheduler}`,
	}, {
		name: "strategic: the main container cannot be deleted",
		revs: `
- component: pool
  type: strategic
  patch: {spec: {containers: [{name: vllm, $patch: delete}]}}`,
		errs: []string{`revisions[0] (component "pool", instance ""): spec.containers[vllm] is the main container and cannot be removed through component "pool"`},
	}, {
		name: "strategic: a field outside the fragments is unreachable",
		revs: `
- component: pool
  type: strategic
  patch: {spec: {tolerations: [{key: gpu, operator: Exists}]}}`,
		errs: []string{`revisions[0] (component "pool", instance ""): spec.tolerations is not reachable through component "pool"`},
	}, {
		name: "json: by position, main container first",
		revs: `
- component: pool
  type: json
  patch:
  - {op: replace, path: /spec/containers/0/image, value: vllm/vllm-openai:v0.6.4}
  - {op: replace, path: /spec/containers/2/ports/0/containerPort, value: 9103}
  - {op: add, path: /metadata/labels/team, value: serving}`,
		ops: `
- {op: add, path: /spec/podLabels/team, value: serving}
- {op: replace, path: /spec/server/image, value: vllm/vllm-openai:v0.6.4}
- {op: replace, path: /spec/sidecars/1/ports/0/containerPort, value: 9103}`,
	}, {
		name: "json: a path outside the fragments is unreachable",
		revs: `
- component: pool
  type: json
  patch:
  - {op: add, path: /spec/nodeSelector, value: {pool: gpu}}
  - {op: move, from: /spec/priorityClassName, path: /spec/schedulerName}`,
		errs: []string{
			`revisions[0] (component "pool", instance ""): patch[0].path: spec.nodeSelector is not reachable through component "pool"`,
			`revisions[0] (component "pool", instance ""): patch[1].from: spec.priorityClassName is not reachable through component "pool"`,
		},
	}, {
		name: "merge: the sidecars replaced, with warnings",
		revs: `
- component: pool
  patch:
    spec:
      containers:
      - {name: vllm, image: vllm/vllm-openai:v0.6.3, args: [--model=meta-llama/Llama-3.1-8B-Instruct, --tensor-parallel-size=2], env: [{name: HF_HOME, value: /cache}], resources: {limits: {nvidia.com/gpu: 2}}}
      - {name: metrics, image: prom/statsd-exporter:v0.28.0}`,
		ops: `
- op: replace
  path: /spec/sidecars
  value: [{name: metrics, image: prom/statsd-exporter:v0.28.0}]`,
		warnings: []string{
			`revisions[0] (component "pool", instance ""): spec.containers[proxy]: a merge patch replaces the whole list, dropping the whole element; use type: strategic to merge by name`,
			`revisions[0] (component "pool", instance ""): spec.containers[metrics]: a merge patch replaces the whole list, dropping ports; use type: strategic to merge by name`,
		},
	}})
}

// A fragmented main container without a name (imagePath and resourcesPath
// alone) cannot be found by a strategic patch; the error says what to do.
func TestReviseSpecStrategicNamelessMain(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "examples", "kartas", "trainjob.yaml"))
	require.NoError(t, err)
	runPatchCases(t, modelFrom(t, string(data)), builtinObject("tutorial-trainjob", "running"), []patchCase{{
		name: "strategic of spec.containers is refused with what to do",
		revs: `
- component: worker
  type: strategic
  patch: {spec: {containers: [{name: worker, image: registry.example.com/llm/train:1.5.0}]}}`,
		errs: []string{`revisions[0] (component "worker", instance ""): spec.containers: a strategic merge patch finds containers by name, ` +
			`and the main container of component "worker" has none: change it by position with type: json (/spec/containers/0/...) or with a merge patch`},
	}, {
		name: "strategic of the fragments it has works",
		revs: `
- component: worker
  type: strategic
  patch: {metadata: {labels: {$patch: replace, team: nlp}}}`,
		ops: `
- {op: remove, path: /spec/workers/labels/example.com~1role}
- {op: add, path: /spec/workers/labels/team, value: nlp}`,
	}, {
		name: "json by position reaches imagePath and resourcesPath",
		revs: `
- component: worker
  type: json
  patch:
  - {op: replace, path: /spec/containers/0/image, value: registry.example.com/llm/train:1.5.0}
  - {op: add, path: /spec/containers/0/resources/requests, value: {cpu: "30"}}`,
		ops: `
- {op: replace, path: /spec/workers/image, value: registry.example.com/llm/train:1.5.0}
- {op: add, path: /spec/workers/resources/requests, value: {cpu: "30"}}`,
	}, {
		name: "merge of the nameless main container warns by position",
		revs: `
- component: worker
  patch: {spec: {containers: [{image: registry.example.com/llm/train:1.5.0}]}}`,
		ops: `
- {op: replace, path: /spec/workers/image, value: registry.example.com/llm/train:1.5.0}
- {op: remove, path: /spec/workers/resources}`,
		warnings: []string{`revisions[0] (component "worker", instance ""): spec.containers[0]: a merge patch replaces the whole list, dropping resources; use type: strategic to merge by name`},
	}})
}

// Merge keys compare as JSON numbers whatever their Go types: a port
// given as json.Number (as the CLI decodes it) merges into an object
// built in Go with int64, and the other way round.
func TestReviseSpecStrategicNumberKeys(t *testing.T) {
	m := builtinModel(t, "pytorchjob")
	for _, tc := range []struct {
		name          string
		objPort, port any
	}{
		{"json.Number into int64", int64(23456), json.Number("23456")},
		{"int64 into json.Number", json.Number("23456"), int64(23456)},
		{"float64 into json.Number", json.Number("23456"), float64(23456)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := builtinObject("pytorchjob", "running")(t)
			c := getPath(obj, "spec", "pytorchReplicaSpecs", "Worker", "template", "spec", "containers", 0).(map[string]any)
			c["ports"].([]any)[0].(map[string]any)["containerPort"] = tc.objPort
			revs := []Revision{{Component: "worker", Type: PatchStrategic, Patch: map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "pytorch", "ports": []any{
					map[string]any{"containerPort": tc.port, "name": "torch"}}}}}}}}
			_, ops, err := checkedRevise(t, m, obj, revs)
			require.NoError(t, err)
			assert.Equal(t, []PatchOp{{Op: "replace", Path: "/spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/ports/0/name", Value: "torch"}}, ops)
		})
	}
}

// A json revision built in Go may hold its operations as
// []map[string]any; what a json patch leaves equal keeps the object's own
// values, Go types included.
func TestReviseSpecJSONGoValues(t *testing.T) {
	m := builtinModel(t, "pytorchjob")
	obj := builtinObject("pytorchjob", "running")(t)
	tpl := getPath(obj, "spec", "pytorchReplicaSpecs", "Worker", "template", "spec").(map[string]any)
	tpl["terminationGracePeriodSeconds"] = int64(30)
	revs := []Revision{{Component: "worker", Type: PatchJSON, Patch: []map[string]any{
		{"op": "add", "path": "/spec/containers/0/env", "value": []any{map[string]any{"name": "A", "value": "1"}}},
		{"op": "replace", "path": "/spec/terminationGracePeriodSeconds", "value": 30.0},
	}}}
	out, ops, err := checkedRevise(t, m, obj, revs)
	require.NoError(t, err)
	assert.Equal(t, []PatchOp{{Op: "add", Path: "/spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/env",
		Value: []any{map[string]any{"name": "A", "value": "1"}}}}, ops)
	assert.Equal(t, int64(30), getPath(out, "spec", "pytorchReplicaSpecs", "Worker", "template", "spec", "terminationGracePeriodSeconds"))
}

// Every instance of "*" gets its own warning.
func TestReviseSpecMergeWarningsPerInstance(t *testing.T) {
	m := fixtureModel(t, "jobset")
	obj := fixtureObject(t, "jobset")
	revs := revisionsFrom(t, `
- component: replicatedjob
  instance: "*"
  patch: {spec: {containers: [{name: nope, image: busybox}]}}`)
	_, _, warnings, err := checkedReviseWarnings(t, m, obj, revs)
	require.NoError(t, err)
	require.NotEmpty(t, warnings)
	insts := map[string]bool{}
	for _, w := range warnings {
		assert.Equal(t, 0, w.Revision)
		assert.Equal(t, "replicatedjob", w.Component)
		assert.Empty(t, w.Dropped, "the old containers go whole: none is named nope")
		insts[w.Instance] = true
	}
	assert.Greater(t, len(insts), 1, "one warning per instance")
}

func TestParsePatchType(t *testing.T) {
	for in, want := range map[string]PatchType{"": PatchMerge, "merge": PatchMerge, "strategic": PatchStrategic, "json": PatchJSON} {
		got, err := ParsePatchType(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := ParsePatchType("Strategic")
	assert.EqualError(t, err, `unknown patch type "Strategic" (want merge, strategic or json)`)
}

func TestDecodeRevisionsTypes(t *testing.T) {
	v := yamlValue(t, `
- {component: a, patch: {spec: {}}}
- {component: b, type: strategic, patch: {spec: {}}}
- {component: c, type: json, patch: [{op: remove, path: /spec/x}]}`)
	revs, err := DecodeRevisions(v)
	require.NoError(t, err)
	assert.Equal(t, []PatchType{"", PatchStrategic, PatchJSON}, []PatchType{revs[0].Type, revs[1].Type, revs[2].Type})

	revs, err = DecodeRevisionsWithType(v, PatchStrategic)
	require.NoError(t, err)
	assert.Equal(t, []PatchType{PatchStrategic, PatchStrategic, PatchJSON}, []PatchType{revs[0].Type, revs[1].Type, revs[2].Type},
		"the default applies to revisions that do not say")

	_, err = DecodeRevisionsWithType(yamlValue(t, `[{component: a, patch: {spec: {}}}]`), PatchJSON)
	assert.EqualError(t, err, "revisions[0].patch must be a list of JSON Patch (RFC 6902) operations over the PodTemplateSpec view, got an object")
	_, err = DecodeRevisionsWithType(v, "apply")
	assert.EqualError(t, err, `default patch type: unknown patch type "apply" (want merge, strategic or json)`)
	revs, err = DecodeRevisionsWithType(v, "")
	require.NoError(t, err)
	assert.Equal(t, PatchMerge, revs[0].Type, `"" is merge`)

	for text, want := range map[string]string{
		`[{component: a, type: 1, patch: {}}]`:                       "revisions[0].type must be a string (merge, strategic or json), got 1",
		`[{component: a, type: yaml, patch: {}}]`:                    `revisions[0].type: unknown patch type "yaml" (want merge, strategic or json)`,
		`[{component: a, type: json, patch: [{op: add, path: /x}]}]`: "revisions[0].patch[0].value: required for add",
		`[{component: a, typ: json, patch: []}]`:                     `revisions[0]: unknown field "typ" (want component, instance, type, patch)`,
	} {
		_, err := DecodeRevisions(yamlValue(t, text))
		assert.EqualError(t, err, want, text)
	}
}

// The ReviseSpec API: the type reaches the Go path and a script's call of
// the generated hook alike, warnings included.
func TestProgramReviseSpecTypes(t *testing.T) {
	k := progKartaFile(t, filepath.Join("..", "builtin", "kartas", "pytorchjob.yaml"))
	const script = `
function ReviseSpec(obj, revisions)
  for _, r in ipairs(revisions) do
    assert(type(r.type) == "string" and r.type ~= "", "the type reaches the script")
  end
  return karta.generated.ReviseSpec(obj, revisions)
end`
	plain := progCompile(t, k, Options{})
	scripted := progCompile(t, k, Options{Scripts: []Script{{Name: "revise.lua", Source: script}}})
	const image = "123456789012.dkr.ecr.us-east-1.amazonaws.com/nlp/sft-trainer:1.9.0"
	container := map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "pytorch", "image": image}}}}
	for _, p := range []*Program{plain, scripted} {
		obj := progObjFile(t, filepath.Join("..", "examples", "pytorchjob", "running.yaml"))[0]
		res, err := p.ReviseSpec(context.Background(), obj, []Revision{{Component: "worker", Type: PatchStrategic, Patch: container}})
		require.NoError(t, err)
		assert.Equal(t, []PatchOp{{Op: "replace", Path: "/spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/image", Value: image}}, res.Patch)
		assert.Empty(t, res.Warnings)

		res, err = p.ReviseSpec(context.Background(), obj, []Revision{{Component: "worker", Patch: container}})
		require.NoError(t, err)
		assert.Len(t, res.Patch, 6)
		require.Len(t, res.Warnings, 1)
		assert.Equal(t, ReviseWarning{Revision: 0, Component: "worker", Path: "spec.containers[pytorch]",
			Dropped: []string{"args", "command", "ports", "resources", "volumeMounts"}, MergeKey: "name"}, res.Warnings[0])

		res, err = p.ReviseSpec(context.Background(), obj, []Revision{{Component: "worker", Type: PatchJSON, Patch: []any{
			map[string]any{"op": "replace", "path": "/spec/containers/0/image", "value": image}}}})
		require.NoError(t, err)
		assert.Equal(t, []PatchOp{{Op: "replace", Path: "/spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/image", Value: image}}, res.Patch)

		_, err = p.ReviseSpec(context.Background(), obj, []Revision{{Component: "worker", Type: "apply", Patch: container}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), `revisions[0] (component "worker", instance ""): type: unknown patch type "apply"`)
	}
}

// Copies may add at most 1 MiB to a view: a few copies of a copy would
// otherwise double it each time. The failing operation is named.
func TestReviseSpecJSONCopyLimit(t *testing.T) {
	m := builtinModel(t, "pytorchjob")
	ops := []any{map[string]any{"op": "add", "path": "/metadata/annotations/big", "value": strings.Repeat("x", 300_000)}}
	for i := range 6 {
		ops = append(ops, map[string]any{"op": "copy", "from": "/metadata/annotations/big", "path": fmt.Sprintf("/metadata/annotations/c%d", i)})
	}
	_, _, err := checkedRevise(t, m, builtinObject("pytorchjob", "running")(t), []Revision{{Component: "worker", Type: PatchJSON, Patch: ops}})
	require.Error(t, err)
	lines := errorLines(t, err)
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], `revisions[0] (component "worker", instance ""): patch[4] (copy /metadata/annotations/c3): `)
	assert.Contains(t, lines[0], "exceeding the limit 1048576")
}
