package studio

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/argo"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karmada"
)

// The names the exports' texts have in their runners' messages.
const (
	karmadaExportSource = "customization.yaml"
	argoHealthScript    = "health.lua"
)

// exportsResponse is the body of POST /api/exports: each Karta's Karmada
// and Argo CD exports, and for each object their answers beside the
// in-process ones.
type exportsResponse struct {
	// Exports are each compiled Karta's, in the Karta text's order; none
	// while it has errors.
	Exports []kartaExports `json:"exports"`
	// Documents are the answers for each object of the objects' text.
	Documents []exportAnswers `json:"documents"`
}

// kartaExports is what `karta karmada export` and `karta argo export`
// write for one Karta, or why they refuse it.
type kartaExports struct {
	Karta string `json:"karta"`
	// Karmada is the ResourceInterpreterCustomization's YAML.
	Karmada      string `json:"karmada,omitempty"`
	KarmadaError string `json:"karmadaError,omitempty"`
	// Argo are the Argo CD customization's scripts by path in its folder
	// (health.lua, actions/...).
	Argo      map[string]string `json:"argo,omitempty"`
	ArgoError string            `json:"argoError,omitempty"`
}

// exportAnswers are one object's answers from the exports and in process.
type exportAnswers struct {
	Document int    `json:"document"`
	Item     int    `json:"item,omitempty"`
	Line     int    `json:"line"`
	Object   string `json:"object"`
	Karta    string `json:"karta,omitempty"`
	// Error is why no Karta answers the object (another kind).
	Error string `json:"error,omitempty"`
	// Karmada are the operations the Karmada export scripts (each one the
	// Karta defines, when the export is refused), run by karmada's
	// interpreter and by the Karta's in-process Karmada hooks.
	Karmada []comparison `json:"karmada,omitempty"`
	// Argo is the health: the exported health.lua's, and the one karta
	// computes in process (InterpretStatus in Argo CD's words).
	Argo *comparison `json:"argo,omitempty"`
}

// comparison is one operation's answers. Agree is set when both
// answered the same value, or failed both; NotExported when the export
// was refused (its error is the export's), so that there is nothing to
// compare.
type comparison struct {
	Operation      string `json:"operation"`
	Exported       any    `json:"exported,omitempty"`
	ExportedError  string `json:"exportedError,omitempty"`
	InProcess      any    `json:"inProcess,omitempty"`
	InProcessError string `json:"inProcessError,omitempty"`
	Agree          bool   `json:"agree"`
	NotExported    bool   `json:"notExported,omitempty"`
}

func (h *Handler) serveExports(w http.ResponseWriter, r *http.Request) {
	var req evaluateRequest
	if !h.decodeRequest(w, r, &req) {
		return
	}
	h.evaluating(w, r, func(ctx context.Context) any { return h.exports(ctx, &req) })
}

// exportRun is one Karta's exports, loaded into their runners.
type exportRun struct {
	kartaExports
	program *interpreter.Program
	karmada *karmada.Interpreter // nil when the export was refused
	health  *argo.Script         // nil when the export was refused
}

// exports exports each Karta of the request as the CLI does, and runs the
// exports on each object under the studio's per-call limits.
func (h *Handler) exports(ctx context.Context, req *evaluateRequest) *exportsResponse {
	resp := &exportsResponse{Exports: []kartaExports{}, Documents: []exportAnswers{}}
	c := check(&req.checkRequest)
	programs, _ := h.compile(c, req.Script)
	runs := make([]*exportRun, len(programs))
	for i, p := range programs {
		runs[i] = h.exportRun(p)
		defer runs[i].close()
		resp.Exports = append(resp.Exports, runs[i].kartaExports)
	}
	if len(programs) == 0 {
		return resp
	}
	docs, _ := decodeObjects(req.Objects, objectsSource)
	for _, doc := range docs {
		obj := &unstructured.Unstructured{Object: doc.Object}
		a := exportAnswers{Document: doc.Index, Item: doc.Item, Line: doc.Line, Object: objectName(obj)}
		p, err := programFor(programs, obj)
		if err != nil {
			a.Error = err.Error()
			resp.Documents = append(resp.Documents, a)
			continue
		}
		a.Karta = p.Name()
		for _, run := range runs {
			if run.program == p {
				a.Karmada = run.karmadaAnswers(ctx, obj)
				a.Argo = run.argoAnswer(ctx, obj)
			}
		}
		resp.Documents = append(resp.Documents, a)
	}
	return resp
}

// exportRun exports p for Karmada and for Argo CD, and loads each export
// into its runner with the studio's limits: what refuses is kept as the
// export's error.
func (h *Handler) exportRun(p *interpreter.Program) *exportRun {
	run := &exportRun{kartaExports: kartaExports{Karta: p.Name()}, program: p}
	if data, err := karmada.Export(p); err != nil {
		run.KarmadaError = err.Error()
	} else {
		run.Karmada = string(data)
		custs, err := karmada.Load(data, karmadaExportSource)
		if err == nil {
			run.karmada, err = karmada.NewInterpreter(custs, karmada.Options{Limits: h.opts.Limits, PoolSize: 1})
		}
		if err != nil {
			run.KarmadaError = "the export does not load in karmada's interpreter: " + err.Error()
		}
	}
	ex, err := argo.ExportProgram(p)
	if err != nil {
		run.ArgoError = err.Error()
		return run
	}
	run.Argo = ex.Scripts
	if run.health, err = argo.CompileWith(argoHealthScript, ex.Scripts[argoHealthScript], h.opts.Limits); err != nil {
		run.ArgoError = "the export does not compile in the Argo CD runner: " + err.Error()
	}
	return run
}

func (run *exportRun) close() {
	if run.karmada != nil {
		run.karmada.Close()
	}
}

// karmadaHooks are the operations both the exported customization (in
// karmada's interpreter) and the Karta's in-process Karmada hooks answer.
type karmadaHooks interface {
	GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *karmada.ReplicaRequirements, error)
	GetComponents(ctx context.Context, obj *unstructured.Unstructured) ([]karmada.Component, error)
	ReflectStatus(ctx context.Context, obj *unstructured.Unstructured) (map[string]any, error)
	InterpretHealth(ctx context.Context, obj *unstructured.Unstructured) (bool, error)
	GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]karmada.DependentObjectReference, error)
}

// objectOperations are the operations that take the object alone: the
// others need more than the studio has (replicas to revise to, members'
// statuses, an observed object).
var objectOperations = map[karmada.Operation]bool{
	karmada.OpInterpretReplica: true, karmada.OpInterpretComponent: true, karmada.OpInterpretStatus: true,
	karmada.OpInterpretHealth: true, karmada.OpInterpretDependency: true,
}

// karmadaAnswer runs one of the objectOperations on obj, as `karta karmada
// run` does.
func karmadaAnswer(ctx context.Context, hooks karmadaHooks, op karmada.Operation, obj *unstructured.Unstructured) (any, error) {
	switch op {
	case karmada.OpInterpretReplica:
		n, req, err := hooks.GetReplicas(ctx, obj)
		return map[string]any{"replica": n, "requires": req}, err
	case karmada.OpInterpretComponent:
		v, err := hooks.GetComponents(ctx, obj)
		return v, err
	case karmada.OpInterpretStatus:
		v, err := hooks.ReflectStatus(ctx, obj)
		return v, err
	case karmada.OpInterpretHealth:
		v, err := hooks.InterpretHealth(ctx, obj)
		return v, err
	case karmada.OpInterpretDependency:
		v, err := hooks.GetDependencies(ctx, obj)
		return v, err
	}
	return nil, fmt.Errorf("%s takes more than the object", op)
}

// karmadaAnswers runs each operation the Karta defines for Karmada on
// obj, with the export and in process.
func (run *exportRun) karmadaAnswers(ctx context.Context, obj *unstructured.Unstructured) []comparison {
	inProcess := karmada.ForProgram(run.program)
	var out []comparison
	for _, op := range inProcess.DefinedOperations() {
		if !objectOperations[op] {
			continue
		}
		want, wantErr := karmadaAnswer(ctx, inProcess, op, obj)
		c := comparison{Operation: string(op)}
		c.InProcess, c.InProcessError = answerOrError(want, wantErr)
		if run.karmada == nil {
			c.NotExported = true
		} else {
			got, gotErr := karmadaAnswer(ctx, run.karmada, op, obj)
			c.Exported, c.ExportedError = answerOrError(got, gotErr)
			c.Agree = agree(c)
		}
		out = append(out, c)
	}
	return out
}

// argoAnswer is the health of obj: the exported health.lua's, and karta's
// in process in Argo CD's words, as `karta argo export` writes its tests.
func (run *exportRun) argoAnswer(ctx context.Context, obj *unstructured.Unstructured) *comparison {
	c := &comparison{Operation: "health"}
	st, err := run.program.InterpretStatus(ctx, obj)
	if err != nil {
		c.InProcessError = err.Error()
	} else {
		want := argo.Health{}
		if word, ok := argo.HealthWords(argo.IsBatch(run.program.Karta()))[st.Status]; ok {
			want = argo.Health{Status: word, Message: argo.HealthMessage(st.Conditions)}
		}
		c.InProcess = want
	}
	if run.health == nil {
		c.NotExported = true
		return c
	}
	got, err := run.health.Run(ctx, obj.Object)
	c.Exported, c.ExportedError = answerOrError(got, err)
	c.Agree = agree(*c)
	return c
}

func answerOrError(v any, err error) (any, string) {
	if err != nil {
		return nil, err.Error()
	}
	return v, ""
}

// agree compares two answers as the JSON the page shows: both failed, or
// neither did and the values are the same.
func agree(c comparison) bool {
	if c.ExportedError != "" || c.InProcessError != "" {
		return c.ExportedError != "" && c.InProcessError != ""
	}
	return reflect.DeepEqual(asJSON(c.Exported), asJSON(c.InProcess))
}

// asJSON is v as encoding/json decodes its text: the same value whatever
// Go types held it.
func asJSON(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return err.Error()
	}
	return out
}
