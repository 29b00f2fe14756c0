package karta

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// The fixtures are decoded with sigs.k8s.io/yaml rather than Load, so that
// validation is tested on its own; they therefore spell out the condition
// field names Load would default.

// fixturePyTorchJob is the PyTorchJob Karta of the original specification,
// with the master written out.
const fixturePyTorchJob = `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: pytorchjob}
spec:
  structureDefinition:
    rootComponent:
      name: pytorchjob
      kind: {group: kubeflow.org, version: v1, kind: PyTorchJob}
      suspendDefinition:
        suspendActions: [{path: .spec.runPolicy.suspend, value: "true"}]
        resumeActions:  [{path: .spec.runPolicy.suspend, value: "false"}]
      statusDefinition:
        conditionsDefinition:
          path: .status.conditions
          typeFieldName: type
          statusFieldName: status
          messageFieldName: message
          reasonFieldName: reason
        statusMappings:
          running: [{byConditions: [{type: Running, status: "True"}]}]
          failed:  [{byConditions: [{type: Failed, status: "True"}]}]
          initializing:
          - byConditions: [{type: Created, status: "True"}]
            byExpression:
              expression: '[.status.conditions[]? | select(.status == "True" and .type != "Created")] | length'
              expectedResult: "0"
    childComponents:
    - name: master
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: pytorchjob
      specDefinition: {podTemplateSpecPath: .spec.pytorchReplicaSpecs.Master.template}
      scaleDefinition:
        replicasPath: .spec.pytorchReplicaSpecs.Master.replicas // 1
      podSelector:
        componentTypeSelector: {keyPath: '.metadata.labels["training.kubeflow.org/replica-type"]', value: master}
    - name: worker
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: pytorchjob
      specDefinition: {podTemplateSpecPath: .spec.pytorchReplicaSpecs.Worker.template}
      scaleDefinition:
        replicasPath: .spec.pytorchReplicaSpecs.Worker.replicas // 1
        minReplicasPath: .spec.elasticPolicy.minReplicas
      podSelector:
        componentTypeSelector: {keyPath: '.metadata.labels["training.kubeflow.org/replica-type"]', value: worker}
  instructions:
    gangScheduling:
      podGroups:
      - name: job
        members:
        - {componentName: master, groupByKeyPaths: ['.metadata.labels["training.kubeflow.org/job-name"]']}
        - {componentName: worker, groupByKeyPaths: ['.metadata.labels["training.kubeflow.org/job-name"]']}
`

// fixturePyTorchJobV2 gangs the PyTorchJob with a v2 podGroup.
const fixturePyTorchJobV2 = `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: pytorchjob-v2}
spec:
  structureDefinition:
    rootComponent:
      name: pytorchjob
      kind: {group: kubeflow.org, version: v1, kind: PyTorchJob}
      statusDefinition:
        conditionsDefinition: {path: .status.conditions, typeFieldName: type, statusFieldName: status}
        statusMappings:
          running: [{byConditions: [{type: Running, status: "True"}]}]
    childComponents:
    - name: master
      ownerRef: pytorchjob
      specDefinition: {podTemplateSpecPath: .spec.pytorchReplicaSpecs.Master.template}
      podSelector:
        componentTypeSelector: {keyPath: '.metadata.labels["training.kubeflow.org/replica-type"]', value: master}
    - name: worker
      ownerRef: pytorchjob
      specDefinition: {podTemplateSpecPath: .spec.pytorchReplicaSpecs.Worker.template}
      scaleDefinition: {replicasPath: .spec.pytorchReplicaSpecs.Worker.replicas}
      podSelector:
        componentTypeSelector: {keyPath: '.metadata.labels["training.kubeflow.org/replica-type"]', value: worker}
  instructions:
    gangScheduling:
      podGroup:
        name: job
        topology: {topologyName: default, preferredTopologyLevel: rack}
        subGroups:
        - componentName: master
        - componentName: worker
          topology: {topologyName: default, requiredTopologyLevel: zone}
`

// fixtureJobSet has a component with instances.
const fixtureJobSet = `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: jobset}
spec:
  structureDefinition:
    rootComponent:
      name: jobset
      kind: {group: jobset.x-k8s.io, version: v1alpha2, kind: JobSet}
      suspendDefinition:
        suspendActions: [{path: .spec.suspend, value: true}]
        resumeActions:  [{path: .spec.suspend, value: false}]
      statusDefinition:
        conditionsDefinition: {path: .status.conditions, typeFieldName: type, statusFieldName: status}
        statusMappings:
          completed: [{byConditions: [{type: Completed, status: "True"}]}]
          failed: [{byConditions: [{type: Failed, status: "True"}]}]
          suspended: [{byConditions: [{type: Suspended, status: "True"}]}]
          running:
          - byConditions: [{type: StartupPolicyCompleted, status: "True"}]
          - byExpression: {expression: '[.status.replicatedJobsStatus[]?.ready // 0] | add // 0 | . > 0', expectedResult: "true"}
          initializing: [{byExpression: {expression: '.status.terminalState', expectedResult: "null"}}]
    childComponents:
    - name: replicatedjob
      kind: {group: batch, version: v1, kind: Job}
      ownerRef: jobset
      instanceIdPath: .spec.replicatedJobs[]?.name
      specDefinition: {podTemplateSpecPath: '.spec.replicatedJobs[]?.template.spec.template'}
      scaleDefinition:
        replicasPath: '.spec.replicatedJobs[]? | (.replicas // 1) * (.template.spec.parallelism // 1)'
      podSelector:
        componentTypeSelector: {keyPath: '.metadata.labels["jobset.sigs.k8s.io/jobset-name"]'}
        componentInstanceSelector: {idPath: '.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"]'}
  instructions:
    gangScheduling:
      podGroups:
      - name: replicatedjob
        members:
        - componentName: replicatedjob
          groupByKeyPaths:
          - '.metadata.labels["jobset.sigs.k8s.io/jobset-name"]'
          - '.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"]'
`

// fixtureLWS has a replicated component (replicaSelector) over two
// pod-bearing children.
const fixtureLWS = `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: leaderworkerset}
spec:
  structureDefinition:
    rootComponent:
      name: lws
      kind: {group: leaderworkerset.x-k8s.io, version: v1, kind: LeaderWorkerSet}
      statusDefinition:
        conditionsDefinition: {path: .status.conditions, typeFieldName: type, statusFieldName: status}
        statusMappings:
          running: [{byConditions: [{type: Available, status: "True"}]}]
          initializing: [{byConditions: [{type: Progressing, status: "True"}]}]
    childComponents:
    - name: group
      ownerRef: lws
      scaleDefinition: {replicasPath: .spec.replicas // 1}
      podSelector:
        replicaSelector: {keyPath: '.metadata.labels["leaderworkerset.sigs.k8s.io/group-index"]'}
    - name: leader
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: group
      specDefinition: {podTemplateSpecPath: '.spec.leaderWorkerTemplate | (.leaderTemplate // .workerTemplate)'}
      scaleDefinition: {replicasPath: "1"}
      podSelector:
        componentTypeSelector: {keyPath: '.metadata.labels["leaderworkerset.sigs.k8s.io/worker-index"]', value: "0"}
    - name: worker
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: group
      specDefinition: {podTemplateSpecPath: .spec.leaderWorkerTemplate.workerTemplate}
      scaleDefinition: {replicasPath: '(.spec.leaderWorkerTemplate.size // 1) - 1'}
      podSelector:
        componentTypeSelector: {keyPath: '.metadata.annotations["leaderworkerset.sigs.k8s.io/leader-name"]'}
  instructions:
    gangScheduling:
      podGroups:
      - name: group
        members:
        - componentName: group
          groupByKeyPaths:
          - '.metadata.labels["leaderworkerset.sigs.k8s.io/name"]'
          - '.metadata.labels["leaderworkerset.sigs.k8s.io/group-index"]'
`

// fixtureNIM has a fragmented root with a read-only image path.
const fixtureNIM = `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: nimservice}
spec:
  structureDefinition:
    rootComponent:
      name: nimservice
      kind: {group: apps.nvidia.com, version: v1alpha1, kind: NIMService}
      specDefinition:
        fragmentedPodSpecDefinition:
          labelsPath: .spec.labels
          annotationsPath: .spec.annotations
          resourcesPath: .spec.resources
          schedulerNamePath: .spec.schedulerName
          podAffinityPath: .spec.podAffinity
      scaleDefinition: {replicasPath: .spec.replicas}
      statusDefinition:
        phaseDefinition: {path: .status.state}
        statusMappings:
          running: [{byPhase: Ready}]
          failed: [{byPhase: Failed}]
          initializing: [{byPhase: Pending}, {byPhase: NotReady}]
`

func mustUnmarshalKarta(t testing.TB, doc string) *Karta {
	t.Helper()
	var k Karta
	require.NoError(t, yaml.UnmarshalStrict([]byte(doc), &k))
	return &k
}

func rootOf(k *Karta) *Component { return k.Spec.StructureDefinition.RootComponent }

func childOf(t testing.TB, k *Karta, name string) *Component {
	t.Helper()
	for i := range k.Spec.StructureDefinition.ChildComponents {
		if c := &k.Spec.StructureDefinition.ChildComponents[i]; c.Name == name {
			return c
		}
	}
	t.Fatalf("no child %q", name)
	return nil
}

func gangOf(k *Karta) *GangScheduling { return k.Spec.Instructions.GangScheduling }

func ptrTo[T any](v T) *T { return &v }

// Field paths used throughout the tests.
const (
	fRoot    = "spec.structureDefinition.rootComponent"
	fMaster  = "spec.structureDefinition.childComponents[0]"
	fWorker  = "spec.structureDefinition.childComponents[1]"
	fStatus  = fRoot + ".statusDefinition"
	fGang    = "spec.instructions.gangScheduling"
	fGroup0  = fGang + ".podGroups[0]"
	fV2      = fGang + ".podGroup"
	fExtra   = "spec.structureDefinition.additionalChildKinds"
	haveAll  = "(have: pytorchjob, master, worker)"
	fJSChild = "spec.structureDefinition.childComponents[0]"
)
