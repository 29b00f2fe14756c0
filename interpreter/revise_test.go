package interpreter

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reviseCase is one ReviseSpec call on a fixture: either the operations it
// yields or every error line it reports.
type reviseCase struct {
	name string
	// edit changes the fixture object before the call.
	edit func(obj map[string]any)
	revs string
	ops  string
	errs []string
}

func runReviseCases(t *testing.T, m *model, fixture func(t testing.TB) map[string]any, cases []reviseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := fixture(t)
			if tc.edit != nil {
				tc.edit(obj)
			}
			_, ops, err := checkedRevise(t, m, obj, revisionsFrom(t, tc.revs))
			if tc.errs != nil {
				require.Error(t, err)
				assert.Equal(t, tc.errs, errorLines(t, err))
				return
			}
			require.NoError(t, err)
			assertOps(t, tc.ops, ops)
		})
	}
}

func fixtureFunc(name string) func(t testing.TB) map[string]any {
	return func(t testing.TB) map[string]any { return fixtureObject(t, name) }
}

func TestReviseSpecTemplate(t *testing.T) {
	const master = "/spec/pytorchReplicaSpecs/Master/template"
	runReviseCases(t, fixtureModel(t, "pytorchjob"), fixtureFunc("pytorchjob"), []reviseCase{{
		name: "a set under a missing parent adds the outermost missing object",
		revs: `
- component: worker
  patch:
    metadata: {labels: {team: a}}
    spec: {schedulerName: kai-scheduler}`,
		ops: `
- {op: add, path: /spec/pytorchReplicaSpecs/Worker/template/metadata, value: {labels: {team: a}}}
- {op: add, path: /spec/pytorchReplicaSpecs/Worker/template/spec/schedulerName, value: kai-scheduler}`,
	}, {
		name: "null removes, objects merge, equal-length arrays diff by element",
		revs: `
- component: master
  instance: ""
  patch:
    metadata: {labels: {role: null, team: b}}
    spec:
      containers:
      - name: pytorch
        image: docker.io/kubeflowkatib/pytorch-mnist:v1beta1-0000000
        resources:
          limits: {nvidia.com/gpu: 1.0, memory: 4Gi}`,
		ops: `
- {op: remove, path: ` + master + `/metadata/labels/role}
- {op: add, path: ` + master + `/metadata/labels/team, value: b}
- {op: remove, path: ` + master + `/spec/containers/0/command}
- {op: replace, path: ` + master + `/spec/containers/0/image, value: docker.io/kubeflowkatib/pytorch-mnist:v1beta1-0000000}`,
	}, {
		name: "removing an absent key and restating equal numbers change nothing",
		revs: `
- component: master
  patch: {metadata: {labels: {gone: null}}}
- component: worker
  patch:
    spec:
      containers:
      - name: pytorch
        image: docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727
        command: [python3, /opt/pytorch-mnist/mnist.py, --epochs=1]
        resources:
          limits: {nvidia.com/gpu: 1.0, memory: 4Gi}
          requests: {cpu: 500m, memory: 1500000000}`,
		ops: ``,
	}, {
		name: "an array whose length changes is replaced whole",
		revs: `
- component: worker
  patch:
    spec:
      tolerations:
      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      - {key: spot, operator: Exists}`,
		ops: `
- op: replace
  path: /spec/pytorchReplicaSpecs/Worker/template/spec/tolerations
  value:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  - {key: spot, operator: Exists}`,
	}, {
		name: "identical writes of two revisions merge",
		revs: `
- component: master
  patch: {metadata: {labels: {team: a}}}
- component: master
  patch: {metadata: {labels: {team: a}}}`,
		ops: `
- {op: add, path: ` + master + `/metadata/labels/team, value: a}`,
	}, {
		name: "the same label set to two values conflicts",
		revs: `
- component: master
  patch: {metadata: {labels: {team: a}}}
- component: master
  patch: {metadata: {labels: {team: b}}}`,
		errs: []string{`conflicting writes: revisions[0] (component "master", instance "") metadata.labels.team and ` +
			`revisions[1] (component "master", instance "") metadata.labels.team write ` + master + `/metadata/labels/team`},
	}, {
		name: "an absent instance named explicitly is an error",
		edit: func(obj map[string]any) {
			delete(getPath(obj, "spec", "pytorchReplicaSpecs").(map[string]any), "Master")
		},
		revs: `
- component: master
  patch: {metadata: {labels: {team: a}}}`,
		errs: []string{`revisions[0] (component "master", instance ""): instance "" of component "master" is absent (its podTemplateSpecPath is null)`},
	}, {
		name: "* skips absent instances",
		edit: func(obj map[string]any) {
			delete(getPath(obj, "spec", "pytorchReplicaSpecs").(map[string]any), "Master")
		},
		revs: `
- component: master
  instance: "*"
  patch: {metadata: {labels: {team: a}}}`,
		ops: ``,
	}, {
		name: "every error is reported and nothing is written",
		revs: `
- component: worker
  patch: {metadata: {labels: {team: a}}}
- component: chief
  patch: {metadata: {labels: {team: a}}}
- component: pytorchjob
  patch: {spec: {schedulerName: x}}
- component: worker
  instance: w-0
  patch: {spec: {schedulerName: x}}
- component: master
  patch: {metadata: {labels: null}}
- component: master
  patch: {metadata: {labels: {team: b}}}`,
		errs: []string{
			`revisions[1] (component "chief", instance ""): unknown component "chief" (components: pytorchjob, master, worker)`,
			`revisions[2] (component "pytorchjob", instance ""): component "pytorchjob" is not pod-bearing (it has no specDefinition)`,
			`revisions[3] (component "worker", instance "w-0"): component "worker" has no instance "w-0" (instances: "")`,
			`conflicting writes: revisions[4] (component "master", instance "") metadata.labels and ` +
				`revisions[5] (component "master", instance "") metadata.labels.team write ` +
				master + `/metadata/labels and ` + master + `/metadata/labels/team`,
		},
	}})
}

func TestReviseSpecInstances(t *testing.T) {
	const jobs = "/spec/replicatedJobs"
	runReviseCases(t, fixtureModel(t, "jobset"), fixtureFunc("jobset"), []reviseCase{{
		name: "* revises every instance at its own location",
		revs: `
- component: replicatedjob
  instance: "*"
  patch: {metadata: {labels: {team: a}}}`,
		ops: `
- {op: add, path: ` + jobs + `/0/template/spec/template/metadata/labels/team, value: a}
- {op: add, path: ` + jobs + `/1/template/spec/template/metadata, value: {labels: {team: a}}}`,
	}, {
		name: "an id revises that instance only",
		revs: `
- component: replicatedjob
  instance: workers
  patch:
    spec:
      containers:
      - {name: worker, image: "ghcr.io/acme/trainer:1.5", args: [--role=worker]}`,
		ops: `
- {op: replace, path: ` + jobs + `/1/template/spec/template/spec/containers/0/image, value: "ghcr.io/acme/trainer:1.5"}`,
	}, {
		name: "instance \"\" is refused with an instanceIdPath",
		revs: `
- component: replicatedjob
  patch: {metadata: {labels: {team: a}}}`,
		errs: []string{`revisions[0] (component "replicatedjob", instance ""): component "replicatedjob" has an instanceIdPath: ` +
			`name an instance ("driver", "workers") or "*"`},
	}, {
		name: "an unknown id is an error",
		revs: `
- component: replicatedjob
  instance: trainers
  patch: {metadata: {labels: {team: a}}}`,
		errs: []string{`revisions[0] (component "replicatedjob", instance "trainers"): component "replicatedjob" has no instance "trainers" ` +
			`(instances: "driver", "workers")`},
	}})
}

func TestReviseSpecSharedTemplate(t *testing.T) {
	const label = "/spec/leaderWorkerTemplate/workerTemplate/metadata/labels/team"
	withLeaderTemplate := func(obj map[string]any) {
		lwt := getPath(obj, "spec", "leaderWorkerTemplate").(map[string]any)
		lwt["leaderTemplate"] = map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "leader", "image": "vllm/vllm-openai:v0.8.5"}}}}
	}
	runReviseCases(t, fixtureModel(t, "leaderworkerset"), fixtureFunc("leaderworkerset"), []reviseCase{{
		name: "the same change through both components merges",
		revs: `
- component: leader
  patch: {metadata: {labels: {team: a}}}
- component: worker
  patch: {metadata: {labels: {team: a}}}`,
		ops: `
- {op: add, path: ` + label + `, value: a}`,
	}, {
		name: "different changes of the shared template conflict",
		revs: `
- component: leader
  patch: {metadata: {labels: {team: a}}}
- component: worker
  patch: {metadata: {labels: {team: b}}}`,
		errs: []string{`conflicting writes: revisions[0] (component "leader", instance "") metadata.labels.team and ` +
			`revisions[1] (component "worker", instance "") metadata.labels.team write ` + label},
	}, {
		name: "with a leaderTemplate the components write apart",
		edit: withLeaderTemplate,
		revs: `
- component: leader
  patch: {metadata: {labels: {team: a}}}
- component: worker
  patch: {metadata: {labels: {team: b}}}`,
		ops: `
- {op: add, path: /spec/leaderWorkerTemplate/leaderTemplate/metadata, value: {labels: {team: a}}}
- {op: add, path: ` + label + `, value: b}`,
	}, {
		name: "a component without a spec definition is refused",
		revs: `
- component: group
  patch: {metadata: {labels: {team: a}}}`,
		errs: []string{`revisions[0] (component "group", instance ""): component "group" is not pod-bearing (it has no specDefinition)`},
	}})
}

func TestReviseSpecFragmented(t *testing.T) {
	const p = "/spec/predictor"
	mainContainer := `
      - modelFormat: {name: sklearn}
        storageUri: gs://kfserving-examples/models/sklearn/1.0/model
        image: kserve/sklearnserver:v0.14.0
        args: [--workers=2]
        resources:
          limits: {cpu: "1", memory: 2Gi}`
	runReviseCases(t, fixtureModel(t, "inferenceservice"), fixtureFunc("inferenceservice"), []reviseCase{{
		name: "labels, annotations and names go to their fragment paths",
		revs: `
- component: predictor
  patch:
    metadata:
      labels: {team: risk, owner: ml}
      annotations: {prometheus.io/scrape: null}
    spec: {schedulerName: kai-scheduler, priorityClassName: high}`,
		ops: `
- {op: remove, path: ` + p + `/annotations/prometheus.io~1scrape}
- {op: add, path: ` + p + `/labels/owner, value: ml}
- {op: replace, path: ` + p + `/labels/team, value: risk}
- {op: add, path: ` + p + `/priorityClassName, value: high}
- {op: add, path: ` + p + `/schedulerName, value: kai-scheduler}`,
	}, {
		name: "a field outside the nodes is unreachable even when it changes nothing",
		revs: `
- component: predictor
  patch:
    metadata: {name: x}
    spec: {tolerations: null}`,
		errs: []string{
			`revisions[0] (component "predictor", instance ""): metadata.name is not reachable through component "predictor"`,
			`revisions[0] (component "predictor", instance ""): spec.tolerations is not reachable through component "predictor"`,
		},
	}, {
		name: "null at an ancestor removes every mapped node below it",
		revs: `
- component: predictor
  patch: {spec: {affinity: null}}`,
		ops: `
- {op: remove, path: ` + p + `/affinity/nodeAffinity}
- {op: remove, path: ` + p + `/affinity/podAffinity}`,
	}, {
		name: "null at one node removes that node",
		revs: `
- component: predictor
  patch: {spec: {affinity: {nodeAffinity: null}}}`,
		ops: `
- {op: remove, path: ` + p + `/affinity/nodeAffinity}`,
	}, {
		name: "a scalar at an ancestor is refused",
		revs: `
- component: predictor
  patch: {spec: {affinity: soft}}`,
		errs: []string{`revisions[0] (component "predictor", instance ""): spec.affinity is not reachable through component "predictor" ` +
			`(only the fields below it are; patch it with an object or null)`},
	}, {
		name: "the main container is written through containerPath and imagePath",
		revs: `
- component: predictor
  patch:
    spec:
      containers:
      - modelFormat: {name: sklearn}
        storageUri: gs://kfserving-examples/models/sklearn/1.0/model
        image: kserve/sklearnserver:v0.15.0
        args: [--workers=4]
        resources:
          limits: {cpu: "1", memory: 2Gi}
      - {name: sidecar, image: "envoyproxy/envoy:v1.31.0"}`,
		ops: `
- {op: replace, path: ` + p + `/model/args/0, value: --workers=4}
- {op: replace, path: ` + p + `/model/image, value: kserve/sklearnserver:v0.15.0}`,
	}, {
		name: "a new container replaces the containersPath list",
		revs: `
- component: predictor
  patch:
    spec:
      containers:` + mainContainer + `
      - {name: sidecar, image: "envoyproxy/envoy:v1.31.0"}
      - {name: logger, image: "fluent/fluent-bit:3.1"}`,
		ops: `
- op: replace
  path: ` + p + `/containers
  value:
  - {name: sidecar, image: "envoyproxy/envoy:v1.31.0"}
  - {name: logger, image: "fluent/fluent-bit:3.1"}`,
	}, {
		name: "the main container cannot be removed",
		revs: `
- component: predictor
  patch: {spec: {containers: []}}
- component: predictor
  patch: {spec: {containers: null}}
- component: predictor
  patch: {spec: null}`,
		errs: []string{
			`revisions[0] (component "predictor", instance ""): spec.containers[0] is the main container and cannot be removed through component "predictor"`,
			`revisions[1] (component "predictor", instance ""): spec.containers[0] is the main container and cannot be removed through component "predictor"`,
			`revisions[2] (component "predictor", instance ""): spec.containers[0] is the main container and cannot be removed through component "predictor"`,
		},
	}, {
		name: "pod spec and metadata on one location write disjoint leaves",
		revs: `
- component: transformer
  instance: transformer
  patch:
    metadata: {labels: {stage: post}}
    spec: {schedulerName: kai-scheduler}`,
		ops: `
- {op: replace, path: /spec/transformer/labels/stage, value: post}
- {op: add, path: /spec/transformer/schedulerName, value: kai-scheduler}`,
	}, {
		name: "one location written through two view paths conflicts",
		revs: `
- component: transformer
  instance: "*"
  patch:
    metadata: {labels: {x: "1"}}
    spec: {labels: {x: "2"}}`,
		errs: []string{`conflicting writes: revisions[0] (component "transformer", instance "transformer") metadata.labels.x and ` +
			`revisions[0] (component "transformer", instance "transformer") spec.labels.x write /spec/transformer/labels/x`},
	}, {
		name: "an instance that does not exist",
		edit: func(obj map[string]any) { delete(obj["spec"].(map[string]any), "transformer") },
		revs: `
- component: transformer
  instance: "*"
  patch: {metadata: {labels: {stage: post}}}
- component: transformer
  instance: transformer
  patch: {metadata: {labels: {stage: post}}}`,
		errs: []string{`revisions[1] (component "transformer", instance "transformer"): component "transformer" has no instance "transformer" (instances: none)`},
	}, {
		name: "a pod spec without metadataPath",
		revs: `
- component: explainer
  patch: {spec: {priorityClassName: high}}`,
		ops: `
- {op: add, path: /spec/explainer/priorityClassName, value: high}`,
	}, {
		name: "the pod spec and metadata objects stay objects",
		revs: `
- component: explainer
  patch: {spec: null}
- component: explainer
  patch: {spec: a}
- component: transformer
  instance: "*"
  patch: {metadata: null}`,
		errs: []string{
			`revisions[0] (component "explainer", instance ""): spec must stay an object through component "explainer" (it is the podSpecPath location); change its fields instead`,
			`revisions[1] (component "explainer", instance ""): spec must stay an object through component "explainer" (it is the podSpecPath location); change its fields instead`,
			`revisions[2] (component "transformer", instance "transformer"): metadata must stay an object through component "transformer" (it is the metadataPath location); change its fields instead`,
		},
	}, {
		name: "metadata without metadataPath and non-template fields are unreachable",
		revs: `
- component: explainer
  patch:
    metadata: {labels: {a: b}}
    foo: 1`,
		errs: []string{
			`revisions[0] (component "explainer", instance ""): foo is not reachable through component "explainer"`,
			`revisions[0] (component "explainer", instance ""): metadata is not reachable through component "explainer" (it has no metadataPath)`,
		},
	}})
}

func TestReviseSpecMainContainerRouting(t *testing.T) {
	const proxy = "/spec/components/proxy"
	standalone := func(obj map[string]any) { obj["spec"].(map[string]any)["mode"] = "standalone" }
	runReviseCases(t, fixtureModel(t, "milvus"), fixtureFunc("milvus"), []reviseCase{{
		name: ".image goes to imagePath and .resources to resourcesPath",
		revs: `
- component: proxy
  instance: proxy
  patch:
    metadata: {labels: {tier: core}}
    spec:
      containers:
      - image: milvusdb/milvus:v2.5.5-proxy
        resources: {requests: {cpu: "1"}}`,
		ops: `
- {op: replace, path: ` + proxy + `/image, value: milvusdb/milvus:v2.5.5-proxy}
- {op: replace, path: ` + proxy + `/podLabels/tier, value: core}
- {op: replace, path: ` + proxy + `/resources/requests/cpu, value: "1"}`,
	}, {
		name: "a missing parent object is created",
		revs: `
- component: proxy
  instance: "*"
  patch:
    spec:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: In, values: [search]}]}]`,
		ops: `
- op: add
  path: ` + proxy + `/affinity
  value:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: In, values: [search]}]}]`,
	}, {
		name: "other main container keys need a containerPath",
		revs: `
- component: proxy
  instance: proxy
  patch:
    spec:
      containers:
      - {name: proxy, image: milvusdb/milvus:v2.5.4-proxy, resources: {requests: {cpu: 500m}}}`,
		errs: []string{`revisions[0] (component "proxy", instance "proxy"): spec.containers[0].name is not reachable through component "proxy" (it has no containerPath)`},
	}, {
		name: "without containersPath spec.containers keeps one element",
		revs: `
- component: proxy
  instance: proxy
  patch:
    spec:
      containers:
      - {image: milvusdb/milvus:v2.5.4-proxy, resources: {requests: {cpu: 500m}}}
      - {name: extra, image: busybox}
- component: proxy
  instance: proxy
  patch: {spec: {containers: []}}`,
		errs: []string{
			`revisions[0] (component "proxy", instance "proxy"): spec.containers must keep exactly one element through component "proxy" (it has no containersPath); the patch gives 2`,
			`revisions[1] (component "proxy", instance "proxy"): spec.containers must keep exactly one element through component "proxy" (it has no containersPath); the patch gives 0`,
		},
	}, {
		name: "emptying the main container removes it",
		revs: `
- component: proxy
  instance: proxy
  patch: {spec: {containers: [{}]}}`,
		errs: []string{`revisions[0] (component "proxy", instance "proxy"): spec.containers[0] is the main container and cannot be removed through component "proxy"`},
	}, {
		name: "a mode guard leaves no instance",
		edit: standalone,
		revs: `
- component: proxy
  instance: "*"
  patch: {metadata: {labels: {tier: core}}}`,
		ops: ``,
	}})
}

// edgeKarta has one component per write edge case.
const edgeKarta = `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: edges}
spec:
  structureDefinition:
    rootComponent:
      name: edges
      kind: {group: example.com, version: v1, kind: Edges}
      statusDefinition:
        statusMappings:
          running: [{byPhase: Running}]
    childComponents:
    - name: direct
      ownerRef: edges
      specDefinition: {podTemplateSpecPath: '(.spec.template // {})'}
    - name: grouped
      ownerRef: edges
      specDefinition: {fragmentedPodSpecDefinition: {labelsPath: '.spec.groups[2].labels'}}
    - name: last
      ownerRef: edges
      specDefinition: {fragmentedPodSpecDefinition: {labelsPath: '.spec.groups[-1].labels'}}
    - name: sliced
      ownerRef: edges
      specDefinition: {fragmentedPodSpecDefinition: {labelsPath: '.spec.groups[0:1][0].labels'}}
    - name: aliased
      ownerRef: edges
      specDefinition:
        fragmentedPodSpecDefinition:
          labelsPath: .spec.podMetadata.labels
          annotationsPath: .spec.podMetadata.labels
    - name: element
      ownerRef: edges
      specDefinition: {fragmentedPodSpecDefinition: {labelsPath: '.spec.labelSets[0]'}}
    - name: jobs
      ownerRef: edges
      instanceIdPath: .spec.jobs[].name
      specDefinition: {podTemplateSpecPath: '.spec.jobs[].template | select(. != null)'}
`

const edgeObject = `
apiVersion: example.com/v1
kind: Edges
metadata: {name: e}
spec:
  template: {spec: {containers: [{name: a}]}}
  groups: [{labels: {x: "1"}}]
  podMetadata: {labels: {}}
  labelSets: [{a: "1"}]
  jobs: [{name: a, template: {spec: {}}}, {name: b}]
`

func TestReviseSpecEdges(t *testing.T) {
	runReviseCases(t, modelFrom(t, edgeKarta), func(t testing.TB) map[string]any { return objectFrom(t, edgeObject) }, []reviseCase{{
		name: "a non-assignable path names the component, the path and the reason",
		revs: `
- component: direct
  patch: {metadata: {labels: {a: b}}}`,
		errs: []string{`component "direct": podTemplateSpecPath "(.spec.template // {})" is not assignable: object construction is not a path`},
	}, {
		name: "a missing array index is not created",
		revs: `
- component: grouped
  patch: {metadata: {labels: {a: b}}}`,
		errs: []string{`revisions[0] (component "grouped", instance "") metadata.labels: cannot write /spec/groups/2/labels: /spec/groups has no index 2 (length 1)`},
	}, {
		name: "a negative index counts from the end",
		revs: `
- component: last
  patch: {metadata: {labels: {a: b}}}`,
		ops: `
- {op: add, path: /spec/groups/0/labels/a, value: b}`,
	}, {
		name: "a slice step and an index make one index",
		revs: `
- component: sliced
  patch: {metadata: {labels: {x: "2"}}}`,
		ops: `
- {op: replace, path: /spec/groups/0/labels/x, value: "2"}`,
	}, {
		name: "aliasing fragment paths conflict",
		revs: `
- component: aliased
  patch: {metadata: {labels: {a: "1"}, annotations: {a: "2"}}}`,
		errs: []string{`conflicting writes: revisions[0] (component "aliased", instance "") metadata.annotations.a and ` +
			`revisions[0] (component "aliased", instance "") metadata.labels.a write /spec/podMetadata/labels/a`},
	}, {
		name: "an array element is not removed",
		revs: `
- component: element
  patch: {metadata: {labels: null}}`,
		errs: []string{`revisions[0] (component "element", instance "") metadata.labels: cannot write /spec/labelSets/0: an array element cannot be removed`},
	}, {
		name: "a path yielding a value count other than the id count is a zip error",
		revs: `
- component: jobs
  instance: a
  patch: {metadata: {labels: {a: b}}}`,
		errs: []string{`component "jobs": podTemplateSpecPath yields 1 value(s) for 2 id(s) [a b]`},
	}})
}

func TestReviseSpecSharesUntouchedSubtrees(t *testing.T) {
	m := fixtureModel(t, "pytorchjob")
	obj := fixtureObject(t, "pytorchjob")
	out, _, err := checkedRevise(t, m, obj, revisionsFrom(t, `
- component: worker
  patch: {spec: {schedulerName: kai-scheduler}}`))
	require.NoError(t, err)
	// The master's template, the metadata and the status are the input's
	// own maps; the worker's template spec is a new map.
	for _, p := range [][]any{
		{"spec", "pytorchReplicaSpecs", "Master"},
		{"metadata"},
		{"status"},
		{"spec", "pytorchReplicaSpecs", "Worker", "template", "spec", "containers"},
	} {
		assert.True(t, sameContainer(getPath(obj, p...), getPath(out, p...)), "%v was copied", p)
	}
	assert.False(t, sameContainer(getPath(obj, "spec", "pytorchReplicaSpecs", "Worker", "template", "spec"),
		getPath(out, "spec", "pytorchReplicaSpecs", "Worker", "template", "spec")))
	assert.Equal(t, "kai-scheduler", getPath(out, "spec", "pytorchReplicaSpecs", "Worker", "template", "spec", "schedulerName"))
}

func TestReviseSpecInt64Numbers(t *testing.T) {
	// An object built in Go may hold int64, which gojq does not take; the
	// comparison below would silently select nothing without conversion.
	m := modelFrom(t, `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: jobs}
spec:
  structureDefinition:
    rootComponent:
      name: jobs
      kind: {group: example.com, version: v1, kind: Jobs}
      statusDefinition: {statusMappings: {running: [{byPhase: Running}]}}
    childComponents:
    - name: job
      ownerRef: jobs
      instanceIdPath: .spec.jobs[] | select(.replicas > 0) | .name
      specDefinition: {podTemplateSpecPath: '.spec.jobs[] | select(.replicas > 0) | .template'}
`)
	obj := map[string]any{"spec": map[string]any{"jobs": []any{
		map[string]any{"name": "a", "replicas": int64(2), "template": map[string]any{"spec": map[string]any{}}},
		map[string]any{"name": "b", "replicas": int64(0), "template": map[string]any{}},
	}}}
	_, ops, err := checkedRevise(t, m, obj, []Revision{{Component: "job", Instance: "*",
		Patch: map[string]any{"spec": map[string]any{"replicasHint": int64(3)}}}})
	require.NoError(t, err)
	assert.Equal(t, []PatchOp{{Op: "add", Path: "/spec/jobs/0/template/spec/replicasHint", Value: int64(3)}}, ops)
}

func TestReviseSpecConcurrent(t *testing.T) {
	// A model is shared by every call; run under -race.
	m := fixtureModel(t, "jobset")
	obj := fixtureObject(t, "jobset")
	revs := revisionsFrom(t, `
- component: replicatedjob
  instance: "*"
  patch: {metadata: {labels: {team: a}}, spec: {schedulerName: kai-scheduler}}`)
	want, wantOps, _, err := m.reviseSpec(context.Background(), obj, revs)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, ops, _, err := m.reviseSpec(context.Background(), obj, revs)
			assert.NoError(t, err)
			assert.Equal(t, want, out)
			assert.Equal(t, wantOps, ops)
		}()
	}
	wg.Wait()
}

func TestReviseErrorTypes(t *testing.T) {
	m := fixtureModel(t, "inferenceservice")
	obj := fixtureObject(t, "inferenceservice")
	_, _, _, err := m.reviseSpec(context.Background(), obj, revisionsFrom(t, `
- component: predictor
  patch: {spec: {tolerations: []}}
- component: transformer
  instance: transformer
  patch: {metadata: {labels: {x: "1"}}, spec: {labels: {x: "2"}}}`))
	var unreachable *UnreachableError
	require.ErrorAs(t, err, &unreachable)
	assert.Equal(t, UnreachableError{Component: "predictor", Path: "spec.tolerations"}, *unreachable)
	var rev *RevisionError
	require.ErrorAs(t, err, &rev)
	assert.Equal(t, 0, rev.Index)
	var conflict *ConflictError
	require.ErrorAs(t, err, &conflict)
	assert.Equal(t, WriteRef{Revision: 1, Component: "transformer", Instance: "transformer", ViewPath: "metadata.labels.x"}, conflict.First)
	assert.Equal(t, "/spec/transformer/labels/x", conflict.SecondLocation)

	_, _, _, err = modelFrom(t, edgeKarta).reviseSpec(context.Background(), objectFrom(t, edgeObject),
		[]Revision{{Component: "direct", Patch: map[string]any{"spec": map[string]any{"x": "y"}}}})
	var pathErr *PathError
	require.ErrorAs(t, err, &pathErr)
	assert.Equal(t, "podTemplateSpecPath", pathErr.Field)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, _, err = m.reviseSpec(ctx, obj, nil)
	assert.True(t, errors.Is(err, context.Canceled))
}

func TestPatchOpJSON(t *testing.T) {
	for _, tc := range []struct {
		op   PatchOp
		want string
	}{
		{PatchOp{Op: "add", Path: "/a", Value: nil}, `{"op":"add","path":"/a","value":null}`},
		{PatchOp{Op: "replace", Path: "/a/0", Value: false}, `{"op":"replace","path":"/a/0","value":false}`},
		{PatchOp{Op: "remove", Path: "/a~1b"}, `{"op":"remove","path":"/a~1b"}`},
	} {
		b, err := tc.op.MarshalJSON()
		require.NoError(t, err)
		assert.JSONEq(t, tc.want, string(b))
	}
}

func TestMergePatch(t *testing.T) {
	// RFC 7386 appendix A, on Go values.
	for _, tc := range []struct{ target, patch, want string }{
		{`{"a": "b"}`, `{"a": "c"}`, `{"a": "c"}`},
		{`{"a": "b"}`, `{"b": "c"}`, `{"a": "b", "b": "c"}`},
		{`{"a": "b"}`, `{"a": null}`, `{}`},
		{`{"a": "b", "b": "c"}`, `{"a": null}`, `{"b": "c"}`},
		{`{"a": ["b"]}`, `{"a": "c"}`, `{"a": "c"}`},
		{`{"a": "c"}`, `{"a": ["b"]}`, `{"a": ["b"]}`},
		{`{"a": {"b": "c"}}`, `{"a": {"b": "d", "c": null}}`, `{"a": {"b": "d"}}`},
		{`{"a": [{"b": "c"}]}`, `{"a": [1]}`, `{"a": [1]}`},
		{`["a", "b"]`, `["c", "d"]`, `["c", "d"]`},
		{`{"a": "b"}`, `["c"]`, `["c"]`},
		{`{"a": "foo"}`, `null`, `null`},
		{`{"a": "foo"}`, `"bar"`, `"bar"`},
		{`{"e": null}`, `{"a": 1}`, `{"e": null, "a": 1}`},
		{`[1, 2]`, `{"a": "b", "c": null}`, `{"a": "b"}`},
		{`{}`, `{"a": {"bb": {"ccc": null}}}`, `{"a": {"bb": {}}}`},
	} {
		target, patch := yamlValue(t, tc.target), yamlValue(t, tc.patch)
		before := deepCopyJSON(target)
		got := mergePatch(target, patch)
		assert.True(t, jsonEqual(yamlValue(t, tc.want), got), "%s + %s = %v", tc.target, tc.patch, got)
		assert.Equal(t, before, target, "the target was modified")
	}
}

func TestJSONEqualNumbers(t *testing.T) {
	assert.True(t, jsonEqual(int64(1), 1.0))
	assert.True(t, jsonEqual(yamlValue(t, "1.0"), 1))
	assert.True(t, jsonEqual(yamlValue(t, "1e2"), int64(100)))
	assert.True(t, jsonEqual(yamlValue(t, "9007199254740993"), int64(9007199254740993)))
	assert.False(t, jsonEqual(yamlValue(t, "9007199254740993"), int64(9007199254740992)))
	assert.False(t, jsonEqual(1, "1"))
	assert.False(t, jsonEqual(nil, false))
	assert.False(t, jsonEqual(map[string]any{"a": 1}, map[string]any{"a": 1, "b": nil}))
}

func TestApplyWrites(t *testing.T) {
	obj := objectFrom(t, `
metadata: {name: e, labels: {a: "1"}}
spec: {list: [{n: 1}], empty: null}`)
	src := WriteRef{Revision: 0, Component: "c", Instance: "", ViewPath: "v"}
	set := func(v any, loc ...any) *write { return &write{src: src, loc: loc, value: v} }
	del := func(loc ...any) *write { return &write{src: src, loc: loc, del: true} }
	for _, tc := range []struct {
		name   string
		writes []*write
		ops    string
		err    string
	}{{
		name:   "deletes of absent keys, under missing or null parents, change nothing",
		writes: []*write{del("metadata", "labels", "b"), del("spec", "empty", "x"), del("status", "x")},
	}, {
		name:   "a null parent becomes an object",
		writes: []*write{set("y", "spec", "empty", "x")},
		ops:    `[{op: replace, path: /spec/empty, value: {x: y}}]`,
	}, {
		name:   "writes into an array element",
		writes: []*write{set(2, "spec", "list", 0, "n"), set(true, "spec", "list", 0, "m")},
		ops:    `[{op: add, path: /spec/list/0/m, value: true}, {op: replace, path: /spec/list/0/n, value: 2}]`,
	}, {
		name:   "through a string",
		writes: []*write{set(1, "metadata", "name", "x")},
		err:    `revisions[0] (component "c", instance "") v: cannot write /metadata/name/x: /metadata/name is string "e", not an object or array`,
	}, {
		name:   "a key on an array",
		writes: []*write{set(1, "spec", "list", "x")},
		err:    `revisions[0] (component "c", instance "") v: cannot write /spec/list/x: /spec/list is an array, not an object`,
	}, {
		name:   "an index on an object",
		writes: []*write{set(1, "metadata", 0)},
		err:    `revisions[0] (component "c", instance "") v: cannot write /metadata/0: /metadata is an object, not an array`,
	}, {
		name:   "an index under a missing parent",
		writes: []*write{set(1, "spec", "missing", 0)},
		err:    `revisions[0] (component "c", instance "") v: cannot write /spec/missing/0: /spec/missing does not exist, and arrays are never created`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			_, ops, err := checkedWrite(t, obj, func() (map[string]any, []PatchOp, error) {
				out, errs := applyWrites(obj, tc.writes)
				if len(errs) > 0 {
					return nil, nil, newReviseError(errs)
				}
				return out, diffOps(obj, out), nil
			})
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assertOps(t, tc.ops, ops)
		})
	}
}
