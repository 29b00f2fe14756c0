package interpreter

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/karta"
)

// InterpretStatus through the Program: its status plan, as the hook and
// as karta.generated.InterpretStatus.

// statusKarta is a Karta of kind example.com/v1 Workload whose root has
// the given statusDefinition (YAML, indented by 6 spaces).
func statusKarta(statusDefinition string) string {
	return `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: status-lab}
spec:
  structureDefinition:
    rootComponent:
      name: workload
      kind: {group: example.com, version: v1, kind: Workload}
      statusDefinition:
` + statusDefinition
}

// statusWorkload is an example.com/v1 Workload with the given status (YAML,
// indented by 2 spaces).
func statusWorkload(status string) string {
	return `
apiVersion: example.com/v1
kind: Workload
metadata: {name: w, namespace: ns}
spec: {replicas: 2}
status:
` + status
}

func statusStr(s string) *string { return &s }

// statusCase is one InterpretStatus call: its result or its error.
type statusCase struct {
	name    string
	obj     string // a status block for statusWorkload(), or a whole object when it starts with "apiVersion"
	status  karta.Status
	matched []karta.Status
	phase   *string
	conds   []Condition // checked when non-nil
	err     string      // a substring of the error; the call must fail
}

func runStatusCases(t *testing.T, p *Program, cases []statusCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := tc.obj
			if !strings.HasPrefix(strings.TrimSpace(text), "apiVersion") {
				text = statusWorkload(text)
			}
			res, err := p.InterpretStatus(context.Background(), progObj(t, text))
			if tc.err != "" {
				require.Error(t, err)
				var he *HookError
				require.True(t, errors.As(err, &he), "want a *HookError, got %T: %v", err, err)
				assert.Equal(t, HookInterpretStatus, he.Hook)
				assert.Contains(t, err.Error(), tc.err)
				assert.True(t, strings.HasPrefix(err.Error(), `karta "`+p.Name()+`": InterpretStatus: `), err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.status, res.Status, "status")
			matched := tc.matched
			if matched == nil {
				matched = []karta.Status{}
			}
			assert.Equal(t, matched, res.Matched, "matched")
			assert.Equal(t, tc.phase, res.Phase, "phase")
			if tc.conds != nil {
				assert.Equal(t, tc.conds, res.Conditions, "conditions")
			}
			assert.NotNil(t, res.Conditions)
		})
	}
}

func TestStatusPhase(t *testing.T) {
	p := progFrom(t, statusKarta(`
        phaseDefinition: {path: .status.phase}
        statusMappings:
          running: [{byPhase: Running}]
          failed: [{byPhase: Failed}]
`))
	runStatusCases(t, p, []statusCase{
		{name: "a string is the phase", obj: "  phase: Running", status: karta.StatusRunning, matched: []karta.Status{karta.StatusRunning}, phase: statusStr("Running")},
		{name: "an unmapped phase is kept", obj: "  phase: Pending", status: karta.StatusUndefined, phase: statusStr("Pending")},
		{name: "an empty phase is a phase", obj: `  phase: ""`, status: karta.StatusUndefined, phase: statusStr("")},
		{name: "a missing phase is null", obj: "  observedGeneration: 3", status: karta.StatusUndefined},
		{name: "an explicit null is null", obj: "  phase: null", status: karta.StatusUndefined},
		{name: "a number is an error", obj: "  phase: 3", err: "phaseDefinition.path must yield a string or null, got 3"},
		{name: "a boolean is an error", obj: "  phase: true", err: "phaseDefinition.path must yield a string or null, got boolean true"},
		{name: "an object is an error", obj: "  phase: {name: Running}", err: "phaseDefinition.path must yield a string or null, got an object"},
		{name: "a jq error is an error", obj: "  - Running", err: "expected an object but got: array"},
	})

	// Zero outputs and the first of several outputs.
	p = progFrom(t, statusKarta(`
        phaseDefinition: {path: '.status.phases[]?'}
        statusMappings:
          running: [{byPhase: Running}]
`))
	runStatusCases(t, p, []statusCase{
		{name: "zero outputs give null", obj: "  phases: []", status: karta.StatusUndefined},
		{name: "the first output is the phase", obj: "  phases: [Running, Failed]", status: karta.StatusRunning, matched: []karta.Status{karta.StatusRunning}, phase: statusStr("Running")},
		{name: "only the first output is checked", obj: "  phases: [Running, 3]", status: karta.StatusRunning, matched: []karta.Status{karta.StatusRunning}, phase: statusStr("Running")},
		{name: "a null first output is null", obj: "  phases: [null, Running]", status: karta.StatusUndefined},
	})
}

func TestStatusNoPhaseDefinition(t *testing.T) {
	p := progFrom(t, statusKarta(`
        conditionsDefinition: {path: .status.conditions}
        statusMappings:
          running: [{byConditions: [{type: Ready}]}]
`))
	runStatusCases(t, p, []statusCase{
		{name: "phase is null without a phase definition", obj: "  phase: Running\n  conditions: [{type: Ready}]",
			status: karta.StatusRunning, matched: []karta.Status{karta.StatusRunning},
			conds: []Condition{{Type: "Ready"}}},
	})
}

func TestStatusConditions(t *testing.T) {
	p := progFrom(t, statusKarta(`
        conditionsDefinition: {path: '.status.conditions, .status.extraConditions'}
        statusMappings:
          running: [{byConditions: [{type: Ready, status: "True"}]}]
          degraded: [{byConditions: [{type: Ready, status: "False"}]}]
`))
	runStatusCases(t, p, []statusCase{{
		name:   "null outputs add nothing",
		obj:    "  conditions: null",
		status: karta.StatusUndefined, conds: []Condition{},
	}, {
		name: "the outputs are flattened in order",
		obj: `  conditions: [{type: Available, status: "True"}]
  extraConditions: [{type: Ready, status: "True", reason: AllGood, message: fine}]`,
		status: karta.StatusRunning, matched: []karta.Status{karta.StatusRunning},
		conds: []Condition{
			{Type: "Available", Status: statusStr("True")},
			{Type: "Ready", Status: statusStr("True"), Reason: statusStr("AllGood"), Message: statusStr("fine")},
		},
	}, {
		name: "entries without a non-empty string type are skipped",
		obj: `  conditions:
  - {status: "True"}
  - {type: "", status: "True"}
  - {type: 7, status: "True"}
  - {type: null, status: "True"}
  - {type: Ready, status: "True"}`,
		status: karta.StatusRunning, matched: []karta.Status{karta.StatusRunning},
		conds: []Condition{{Type: "Ready", Status: statusStr("True")}},
	}, {
		name: "the last condition of a type wins, all are listed",
		obj: `  conditions:
  - {type: Ready, status: "True"}
  - {type: Ready, status: "False", reason: CrashLoop}`,
		status: karta.StatusDegraded, matched: []karta.Status{karta.StatusDegraded},
		conds: []Condition{
			{Type: "Ready", Status: statusStr("True")},
			{Type: "Ready", Status: statusStr("False"), Reason: statusStr("CrashLoop")},
		},
	}, {
		name: "the last one wins across outputs",
		obj: `  conditions: [{type: Ready, status: "False"}]
  extraConditions: [{type: Ready, status: "True"}]`,
		status: karta.StatusRunning, matched: []karta.Status{karta.StatusRunning},
	}, {
		name:   "status, reason and message may be null",
		obj:    `  conditions: [{type: Ready, status: null, reason: null, message: null}]`,
		status: karta.StatusUndefined,
		conds:  []Condition{{Type: "Ready"}},
	}, {
		name: "a numeric status is an error",
		obj:  `  conditions: [{type: Ready, status: 1}]`,
		err:  `condition "Ready": field "status" must be a string or null, got 1`,
	}, {
		name: "a boolean reason is an error",
		obj:  `  conditions: [{type: Ready, status: "True", reason: false}]`,
		err:  `condition "Ready": field "reason" must be a string or null, got boolean false`,
	}, {
		name: "an object message is an error",
		obj:  `  conditions: [{type: Ready, status: "True", message: {text: hi}}]`,
		err:  `condition "Ready": field "message" must be a string or null, got an object`,
	}, {
		name: "an output that is an object is an error",
		obj:  `  conditions: {type: Ready, status: "True"}`,
		err:  "conditionsDefinition.path output 1 must be an array of objects or null, got an object",
	}, {
		name: "an output that is a string is an error",
		obj: `  conditions: []
  extraConditions: Ready`,
		err: `conditionsDefinition.path output 2 must be an array of objects or null, got string "Ready"`,
	}, {
		name: "an entry that is not an object is an error",
		obj:  `  conditions: [{type: Ready, status: "True"}, Ready]`,
		err:  "conditionsDefinition.path output 1: entry 1 must be an object, got string",
	}})
}

func TestStatusConditionFieldNames(t *testing.T) {
	// Custom names; reason and message disabled with "".
	p := progFrom(t, statusKarta(`
        conditionsDefinition:
          path: .status.health
          typeFieldName: kind
          statusFieldName: state
          reasonFieldName: ""
          messageFieldName: ""
        statusMappings:
          running: [{byConditions: [{type: Serving, status: ok}]}]
`))
	runStatusCases(t, p, []statusCase{{
		name: "the Karta's field names are read; disabled fields are null and unchecked",
		obj: `  health:
  - {kind: Serving, state: ok, reason: 42, message: {not: checked}}
  - {type: Ignored, status: ok}`,
		status: karta.StatusRunning, matched: []karta.Status{karta.StatusRunning},
		conds: []Condition{{Type: "Serving", Status: statusStr("ok")}},
	}})

	// Defaults applied by the loader when the keys are absent or null.
	p = progFrom(t, statusKarta(`
        conditionsDefinition: {path: .status.conditions, typeFieldName: null, reasonFieldName: null}
        statusMappings:
          running: [{byConditions: [{type: Ready, status: "True", reason: Up}]}]
`))
	runStatusCases(t, p, []statusCase{{
		name:   "defaulted names",
		obj:    `  conditions: [{type: Ready, status: "True", reason: Up, message: serving}]`,
		status: karta.StatusRunning, matched: []karta.Status{karta.StatusRunning},
		conds: []Condition{{Type: "Ready", Status: statusStr("True"), Reason: statusStr("Up"), Message: statusStr("serving")}},
	}})
}

func TestStatusByConditions(t *testing.T) {
	p := progFrom(t, statusKarta(`
        conditionsDefinition: {path: .status.conditions}
        statusMappings:
          failed: [{byConditions: [{type: Ready, status: "False", reason: ImagePullBackOff}]}]
          degraded: [{byConditions: [{type: Ready, reason: Throttled}]}]
          running: [{byConditions: [{type: Ready, status: "True"}, {type: Available}]}]
          initializing: [{byConditions: [{type: Scheduled}]}]
`))
	runStatusCases(t, p, []statusCase{
		{name: "status and reason must both be equal", obj: `  conditions: [{type: Ready, status: "False", reason: ImagePullBackOff}]`,
			status: karta.StatusFailed, matched: []karta.Status{karta.StatusFailed}},
		{name: "a different reason does not match", obj: `  conditions: [{type: Ready, status: "False", reason: ErrImagePull}]`,
			status: karta.StatusUndefined},
		{name: "a null reason does not match a reason", obj: `  conditions: [{type: Ready, status: "False"}]`,
			status: karta.StatusUndefined},
		{name: "a reason without a status matches any status", obj: `  conditions: [{type: Ready, status: Unknown, reason: Throttled}]`,
			status: karta.StatusDegraded, matched: []karta.Status{karta.StatusDegraded}},
		{name: "all conditions of a matcher must hold", obj: `  conditions: [{type: Ready, status: "True"}]`,
			status: karta.StatusUndefined},
		{name: "a type alone only needs to exist", obj: `  conditions: [{type: Ready, status: "True"}, {type: Available, status: "False"}, {type: Scheduled, status: "False"}]`,
			status: karta.StatusRunning, matched: []karta.Status{karta.StatusRunning, karta.StatusInitializing}},
		{name: "status comparison is exact", obj: `  conditions: [{type: Ready, status: "true"}, {type: Available}]`,
			status: karta.StatusUndefined},
		{name: "no conditions, Undefined", obj: `  conditions: []`, status: karta.StatusUndefined},
	})
}

func TestStatusByExpression(t *testing.T) {
	p := progFrom(t, statusKarta(`
        conditionsDefinition: {path: .status.conditions}
        statusMappings:
          failed:
          - byExpression: {expression: .status.message, expectedResult: 'pod "w-0" says: C:\new\tab'}
          completed:
          - byExpression: {expression: .status.result, expectedResult: '{"a":1}'}
          suspended:
          - byExpression: {expression: .status.suspendedAt, expectedResult: "null"}
            byConditions: [{type: Suspended}]
          degraded:
          - byExpression: {expression: '.status.restarts, .status.maxRestarts', expectedResult: "3"}
          running:
          - byExpression: {expression: '.status.readyReplicas | select(. != null)', expectedResult: "null"}
          - byExpression: {expression: '.status.ready // empty', expectedResult: "true"}
          initializing:
          - byExpression: {expression: '.status.stage', expectedResult: '"quoted"'}
`))
	runStatusCases(t, p, []statusCase{
		{name: "quotes and backslashes are ordinary characters", obj: `  message: 'pod "w-0" says: C:\new\tab'`,
			status: karta.StatusFailed, matched: []karta.Status{karta.StatusFailed}},
		{name: "a near miss on a backslash does not match", obj: `  message: 'pod "w-0" says: C:\\new\\tab'`,
			status: karta.StatusUndefined},
		{name: "an object is compared as compact JSON", obj: `  result: {a: 1}`,
			status: karta.StatusCompleted, matched: []karta.Status{karta.StatusCompleted}},
		{name: "an object with another value does not match", obj: `  result: {a: 2}`,
			status: karta.StatusUndefined},
		{name: "the string of the JSON does not match an object", obj: `  result: '{"a": 1}'`,
			status: karta.StatusUndefined},
		{name: `"null" matches a missing field`, obj: `  conditions: [{type: Suspended, status: "True"}]`,
			status: karta.StatusSuspended, matched: []karta.Status{karta.StatusSuspended}},
		{name: `"null" does not match a set field`, obj: `  suspendedAt: "2025-01-01T00:00:00Z"
  conditions: [{type: Suspended, status: "True"}]`,
			status: karta.StatusUndefined},
		{name: `"3" matches the number 3, the first output only`, obj: "  restarts: 3\n  maxRestarts: 5",
			status: karta.StatusDegraded, matched: []karta.Status{karta.StatusDegraded}},
		{name: `"3" matches the string "3"`, obj: `  restarts: "3"`,
			status: karta.StatusDegraded, matched: []karta.Status{karta.StatusDegraded}},
		{name: "a second output is not compared", obj: "  restarts: 0\n  maxRestarts: 3",
			status: karta.StatusUndefined},
		{name: "zero outputs never match, not even null", obj: "  replicas: 2",
			status: karta.StatusUndefined},
		{name: "a boolean through tostring", obj: "  ready: true",
			status: karta.StatusRunning, matched: []karta.Status{karta.StatusRunning}},
		{name: "a string with quotes is not re-quoted", obj: `  stage: '"quoted"'`,
			status: karta.StatusInitializing, matched: []karta.Status{karta.StatusInitializing}},
		{name: "a quoted expectation does not match the bare string", obj: `  stage: quoted`,
			status: karta.StatusUndefined},
		{name: "a jq error is an error", obj: "  - 1",
			err: "expected an object but got: array"},
	})
}

func TestStatusPrecedence(t *testing.T) {
	p := progFrom(t, statusKarta(`
        conditionsDefinition: {path: .status.conditions}
        statusMappings:
          initializing: [{byConditions: [{type: Created, status: "True"}]}]
          running: [{byConditions: [{type: Running, status: "True"}]}]
          degraded: [{byConditions: [{type: Restarting, status: "True"}]}]
          suspended: [{byConditions: [{type: Suspended, status: "True"}]}]
          suspending: [{byConditions: [{type: Suspending, status: "True"}]}]
          resuming: [{byConditions: [{type: Resuming, status: "True"}]}]
          completed: [{byConditions: [{type: Succeeded, status: "True"}]}]
          failed: [{byConditions: [{type: Failed, status: "True"}]}]
`))
	all := `  conditions:
  - {type: Created, status: "True"}
  - {type: Running, status: "True"}
  - {type: Restarting, status: "True"}
  - {type: Suspended, status: "True"}
  - {type: Suspending, status: "True"}
  - {type: Resuming, status: "True"}
  - {type: Succeeded, status: "True"}
  - {type: Failed, status: "True"}`
	runStatusCases(t, p, []statusCase{
		{name: "every status, in precedence order", obj: all, status: karta.StatusFailed, matched: karta.StatusPrecedence},
		{name: "Suspending beats Suspended", obj: "  conditions: [{type: Suspended, status: \"True\"}, {type: Suspending, status: \"True\"}]",
			status: karta.StatusSuspending, matched: []karta.Status{karta.StatusSuspending, karta.StatusSuspended}},
		{name: "Resuming beats Suspending", obj: "  conditions: [{type: Suspending, status: \"True\"}, {type: Resuming, status: \"True\"}]",
			status: karta.StatusResuming, matched: []karta.Status{karta.StatusResuming, karta.StatusSuspending}},
		{name: "Degraded beats Running", obj: "  conditions: [{type: Running, status: \"True\"}, {type: Restarting, status: \"True\"}]",
			status: karta.StatusDegraded, matched: []karta.Status{karta.StatusDegraded, karta.StatusRunning}},
		{name: "Completed beats Running", obj: "  conditions: [{type: Running, status: \"True\"}, {type: Succeeded, status: \"True\"}]",
			status: karta.StatusCompleted, matched: []karta.Status{karta.StatusCompleted, karta.StatusRunning}},
		{name: "Running beats Initializing", obj: "  conditions: [{type: Created, status: \"True\"}, {type: Running, status: \"True\"}]",
			status: karta.StatusRunning, matched: []karta.Status{karta.StatusRunning, karta.StatusInitializing}},
		{name: "nothing matches: Undefined", obj: "  conditions: [{type: Created, status: \"False\"}]",
			status: karta.StatusUndefined, matched: []karta.Status{}},
		{name: "no status at all: Undefined", obj: "  {}", status: karta.StatusUndefined, conds: []Condition{}},
	})
}

// TestStatusRealWorkloads runs the Karta fixtures on objects modelled on
// what the operators write.
func TestStatusRealWorkloads(t *testing.T) {
	jobset := progCompile(t, progKartaFile(t, filepath.Join(progProgramDir, "jobset.karta.yaml")), Options{})
	jobsets := progObjFile(t, filepath.Join(progProgramDir, "jobset.yaml"))
	pytorch := progCompile(t, progKartaFile(t, examplePyTorchJob), Options{})
	rayjob := progCompile(t, progKartaFile(t, filepath.Join(progProgramDir, "rayjob.karta.yaml")), Options{})
	isvc := progCompile(t, progKartaFile(t, filepath.Join(progProgramDir, "inferenceservice.karta.yaml")), Options{})
	isvcs := progObjFile(t, filepath.Join(progProgramDir, "inferenceservice.yaml"))
	workflow := progCompile(t, progKartaFile(t, filepath.Join(progProgramDir, "workflow.karta.yaml")), Options{})
	workflows := progObjFile(t, filepath.Join(progProgramDir, "workflow.yaml"))
	knative := progCompile(t, progKartaFile(t, filepath.Join(progProgramDir, "knative-service.karta.yaml")), Options{})
	knatives := progObjFile(t, filepath.Join(progProgramDir, "knative-service.yaml"))

	ptj := func(conds string) string {
		return `
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: mnist, namespace: kubeflow}
spec:
  pytorchReplicaSpecs:
    Worker: {replicas: 2, template: {spec: {containers: [{name: pytorch, image: pytorch:2.5}]}}}
status:
  replicaStatuses: {Worker: {active: 2}}
  conditions:
` + conds
	}
	rj := func(phase string) string {
		return `
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: rj, namespace: ray}
spec: {entrypoint: python job.py}
status: {jobDeploymentStatus: ` + phase + `}
`
	}
	type realCase struct {
		name    string
		p       *Program
		obj     string
		fixture *unstructured.Unstructured // used when obj is ""
		status  karta.Status
		matched []karta.Status
		phase   *string
	}
	cases := []realCase{{
		name: "running JobSet: StartupPolicyCompleted and ready jobs",
		p:    jobset, fixture: jobsets[0], status: karta.StatusRunning, matched: []karta.Status{karta.StatusRunning},
	}, {
		name: "finished JobSet: Completed beats the StartupPolicyCompleted it keeps",
		p:    jobset, fixture: jobsets[1], status: karta.StatusCompleted, matched: []karta.Status{karta.StatusCompleted, karta.StatusRunning},
	}, {
		name: "new JobSet: nothing ready yet",
		p:    jobset, fixture: jobsets[2], status: karta.StatusInitializing, matched: []karta.Status{karta.StatusInitializing},
	}, {
		name: "PyTorchJob created only: Initializing through byConditions AND byExpression",
		p:    pytorch, obj: ptj(`  - {type: Created, status: "True", reason: PyTorchJobCreated, message: PyTorchJob mnist is created.}`),
		status: karta.StatusInitializing, matched: []karta.Status{karta.StatusInitializing},
	}, {
		name: "PyTorchJob running: the expression no longer holds",
		p:    pytorch, obj: ptj(`  - {type: Created, status: "True", reason: PyTorchJobCreated}
  - {type: Running, status: "True", reason: PyTorchJobRunning, message: PyTorchJob mnist is running.}`),
		status: karta.StatusRunning, matched: []karta.Status{karta.StatusRunning},
	}, {
		name: "PyTorchJob restarting: Degraded beats Running",
		p:    pytorch, obj: ptj(`  - {type: Created, status: "True", reason: PyTorchJobCreated}
  - {type: Running, status: "True", reason: PyTorchJobRunning}
  - {type: Restarting, status: "True", reason: PyTorchJobRestarting, message: 'PyTorchJob mnist is restarting because 1 Worker replica(s) failed.'}`),
		status: karta.StatusDegraded, matched: []karta.Status{karta.StatusDegraded, karta.StatusRunning},
	}, {
		name: "PyTorchJob succeeded: Running went False",
		p:    pytorch, obj: ptj(`  - {type: Created, status: "True", reason: PyTorchJobCreated}
  - {type: Running, status: "False", reason: PyTorchJobSucceeded}
  - {type: Succeeded, status: "True", reason: PyTorchJobSucceeded, message: PyTorchJob mnist is successfully completed.}`),
		status: karta.StatusCompleted, matched: []karta.Status{karta.StatusCompleted},
	}, {
		name: "PyTorchJob failed",
		p:    pytorch, obj: ptj(`  - {type: Created, status: "True", reason: PyTorchJobCreated}
  - {type: Running, status: "False", reason: PyTorchJobFailed}
  - {type: Failed, status: "True", reason: PyTorchJobFailed, message: 'PyTorchJob mnist is failed because 1 Worker replica(s) failed.'}`),
		status: karta.StatusFailed, matched: []karta.Status{karta.StatusFailed},
	}, {
		name: "PyTorchJob suspended",
		p:    pytorch, obj: ptj(`  - {type: Created, status: "True", reason: PyTorchJobCreated}
  - {type: Running, status: "False", reason: PyTorchJobSuspended}
  - {type: Suspended, status: "True", reason: PyTorchJobSuspended, message: PyTorchJob mnist is suspended.}`),
		status: karta.StatusSuspended, matched: []karta.Status{karta.StatusSuspended},
	}, {
		name: "Workflow running with a failed child: the quoted message matches", p: workflow, fixture: workflows[0],
		status: karta.StatusDegraded, matched: []karta.Status{karta.StatusDegraded, karta.StatusRunning}, phase: statusStr("Running"),
	}, {
		name: "Workflow not started: \"null\" matches the missing phase", p: workflow, fixture: workflows[1],
		status: karta.StatusInitializing, matched: []karta.Status{karta.StatusInitializing},
	}, {
		name: "Workflow with a failed node", p: workflow, obj: `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: wf, namespace: argo}
spec: {entrypoint: main, suspend: true}
status:
  phase: Running
  message: 'child "train" failed: C:\\logs\\train.txt'
  nodes:
    wf-1: {phase: Succeeded}
    wf-2: {phase: Failed, message: "Error (exit code 1)"}`,
		status: karta.StatusFailed, matched: []karta.Status{karta.StatusFailed, karta.StatusSuspended, karta.StatusRunning}, phase: statusStr("Running"),
	}, {
		name: "RayJob Running", p: rayjob, obj: rj("Running"),
		status: karta.StatusRunning, matched: []karta.Status{karta.StatusRunning}, phase: statusStr("Running"),
	}, {
		name: "RayJob Complete", p: rayjob, obj: rj("Complete"),
		status: karta.StatusCompleted, matched: []karta.Status{karta.StatusCompleted}, phase: statusStr("Complete"),
	}, {
		name: "RayJob ValidationFailed", p: rayjob, obj: rj("ValidationFailed"),
		status: karta.StatusFailed, matched: []karta.Status{karta.StatusFailed}, phase: statusStr("ValidationFailed"),
	}, {
		name: "RayJob Waiting", p: rayjob, obj: rj("Waiting"),
		status: karta.StatusInitializing, matched: []karta.Status{karta.StatusInitializing}, phase: statusStr("Waiting"),
	}, {
		name: `RayJob "": Initializing through the expression`, p: rayjob, obj: rj(`""`),
		status: karta.StatusInitializing, matched: []karta.Status{karta.StatusInitializing}, phase: statusStr(""),
	}, {
		name: "RayJob Suspending", p: rayjob, obj: rj("Suspending"),
		status: karta.StatusSuspending, matched: []karta.Status{karta.StatusSuspending}, phase: statusStr("Suspending"),
	}, {
		name: "RayJob Retrying", p: rayjob, obj: rj("Retrying"),
		status: karta.StatusDegraded, matched: []karta.Status{karta.StatusDegraded}, phase: statusStr("Retrying"),
	}, {
		name: "RayJob New is not mapped", p: rayjob, obj: rj("New"),
		status: karta.StatusUndefined, matched: []karta.Status{}, phase: statusStr("New"),
	}, {
		name: "RayJob without a status: the expression sees null, not \"\"", p: rayjob, obj: `
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: rj, namespace: ray}
spec: {entrypoint: python job.py}`,
		status: karta.StatusUndefined, matched: []karta.Status{},
	}}
	require.Len(t, jobsets, 3)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := tc.fixture
			if tc.obj != "" {
				obj = progObj(t, tc.obj)
			}
			res, err := tc.p.InterpretStatus(context.Background(), obj)
			require.NoError(t, err)
			assert.Equal(t, tc.status, res.Status)
			assert.Equal(t, tc.matched, res.Matched)
			assert.Equal(t, tc.phase, res.Phase)
		})
	}

	t.Run("InferenceService", func(t *testing.T) {
		want := []struct {
			status  karta.Status
			matched []karta.Status
		}{
			{karta.StatusRunning, []karta.Status{karta.StatusRunning}},
			{karta.StatusInitializing, []karta.Status{karta.StatusInitializing}},
			{karta.StatusFailed, []karta.Status{karta.StatusFailed, karta.StatusInitializing}},
		}
		require.Len(t, isvcs, len(want))
		for i, obj := range isvcs {
			res, err := isvc.InterpretStatus(context.Background(), obj)
			require.NoError(t, err)
			assert.Equal(t, want[i].status, res.Status, obj.GetName())
			assert.Equal(t, want[i].matched, res.Matched, obj.GetName())
		}
		res, err := isvc.InterpretStatus(context.Background(), isvcs[1])
		require.NoError(t, err)
		require.Len(t, res.Conditions, 2)
		assert.Equal(t, Condition{Type: "Ready", Status: statusStr("False"), Reason: statusStr("RevisionMissing"),
			Message: statusStr(`Configuration "sklearn-iris-predictor" is waiting for a Revision to become ready.`)}, res.Conditions[1])
	})

	t.Run("Knative", func(t *testing.T) {
		for i, want := range []karta.Status{karta.StatusRunning, karta.StatusInitializing} {
			res, err := knative.InterpretStatus(context.Background(), knatives[i])
			require.NoError(t, err)
			assert.Equal(t, want, res.Status, knatives[i].GetName())
		}
	})
}

// TestKnownBugStatusNumberLiteral: KNOWN BUG in luaapi's view (not owned
// here), the byExpression side of TestKnownBugJQNumberLiterals.
// byExpression compares its first output converted with jq tostring: gojq
// renders the literal 3.0 as "3.0", but the generated hook sees a Lua
// number and renders "3", so expectedResult "3.0" never matches and "3"
// does.
func TestKnownBugStatusNumberLiteral(t *testing.T) {
	knownBug(t, "luaapi: byExpression sees number literals as Lua numbers (3.0 → \"3\")", func(t testing.TB) {
		p := progFrom(t, statusKarta(`
        statusMappings:
          running: [{byExpression: {expression: .status.ratio, expectedResult: "3.0"}}]
          degraded: [{byExpression: {expression: .status.ratio, expectedResult: "3"}}]
`))
		res, err := p.InterpretStatus(context.Background(), progObj(t, statusWorkload("  ratio: 3.0")))
		require.NoError(t, err)
		assert.Equal(t, karta.StatusRunning, res.Status, "3.0 through tostring is 3.0")
		assert.Equal(t, []karta.Status{karta.StatusRunning}, res.Matched)
	})
}

// TestScriptCatchesGeneratedStatusError: a script that calls
// karta.generated.InterpretStatus under pcall gets its error, whose
// tostring is the message the hook reports.
func TestScriptCatchesGeneratedStatusError(t *testing.T) {
	k := progKarta(t, statusKarta(`
        phaseDefinition: {path: .status.phase}
        statusMappings:
          running: [{byPhase: Running}]
`))
	p := progCompile(t, k, Options{Scripts: []Script{{Name: "catch.lua", Source: `
function InterpretStatus(obj)
  local ok, r = pcall(karta.generated.InterpretStatus, obj)
  if not ok then error("caught: " .. tostring(r), 0) end
  return r
end
`}}})
	res, err := p.InterpretStatus(t.Context(), progObj(t, statusWorkload("  phase: Running")))
	require.NoError(t, err)
	assert.Equal(t, karta.StatusRunning, res.Status)
	_, err = p.InterpretStatus(t.Context(), progObj(t, statusWorkload("  phase: 3")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "caught: phaseDefinition.path must yield a string or null, got 3")
}
