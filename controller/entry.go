package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// maxMessage is the longest condition message the CRD accepts.
const maxMessage = 32768

// key names a watched object: its source (index into the controller's
// sources) and namespace/name.
type key struct {
	src       int
	namespace string
	name      string
}

// verdict is a condition before observedGeneration and the transition
// time are added.
type verdict struct {
	status  metav1.ConditionStatus
	reason  string
	message string
}

// entry is what the controller knows of one object. Entries are never
// modified once stored; a change stores a new one.
type entry struct {
	key        key
	uid        types.UID
	generation int64
	created    time.Time
	// doc is the document loaded, to skip recompiling an object whose
	// Karta did not change (a status write, a resync).
	doc []byte

	// program is the compiled Karta, nil when it did not load, validate
	// or compile; gvk is its kind.
	program *interpreter.Program
	gvk     schema.GroupVersionKind
	// checked is the Karta's checked form, nil when it did not load.
	checked *karta.Checked
	// schema is the SchemaChecked condition (Options.CRDs), set on an
	// entry with a Program before it is stored.
	schema verdict

	accepted verdict
	// compiled is the Compiled condition when the Karta does not compile
	// (or was not accepted); a compiled one's depends on the conflict
	// rule.
	compiled verdict
	// outcome is the reconcile result for metrics: resultInvalid,
	// resultCompileFailed or resultAccepted.
	outcome string
}

// build loads, validates and compiles obj. prev is the object's previous
// entry, reused when the Karta is unchanged.
func build(ctx context.Context, k key, obj *unstructured.Unstructured, prev *entry, opts interpreter.Options) *entry {
	e := &entry{key: k, uid: obj.GetUID(), generation: obj.GetGeneration(), created: obj.GetCreationTimestamp().Time}
	doc, err := document(obj)
	if err != nil {
		e.invalid(err.Error())
		return e
	}
	e.doc = doc
	if prev != nil && bytes.Equal(prev.doc, doc) {
		e.program, e.gvk, e.accepted, e.compiled, e.outcome = prev.program, prev.gvk, prev.accepted, prev.compiled, prev.outcome
		e.checked = prev.checked
		return e
	}
	ks, err := karta.Load(doc, k.String())
	if err != nil {
		e.invalid(loadMessage(err))
		return e
	}
	if len(ks) != 1 {
		e.invalid(fmt.Sprintf("the object holds %d Kartas, not one", len(ks)))
		return e
	}
	kt := ks[0]
	checked, problems := karta.Analyze(kt, interpreter.ValidateOptions())
	if problems.HasErrors() {
		e.invalid(problemLines(problems))
		return e
	}
	e.accepted = verdict{status: metav1.ConditionTrue, reason: ReasonValid, message: "the Karta is valid"}
	if len(problems) > 0 {
		e.accepted.message = "the Karta is valid, with warnings:\n" + problemLines(problems)
	}
	e.checked = checked
	p, err := interpreter.CompileChecked(checked, opts)
	if err != nil {
		e.compiled = verdict{status: metav1.ConditionFalse, reason: ReasonCompileFailed, message: err.Error()}
		e.outcome = resultCompileFailed
		return e
	}
	// The scripts' top level runs before every hook they define: one that
	// cannot run (an error, a loop) is a Karta that cannot work, reported
	// now, and the base Program keeps the kind.
	if err := p.CheckLoad(ctx); err != nil && ctx.Err() == nil {
		e.compiled = verdict{status: metav1.ConditionFalse, reason: ReasonScriptFailed, message: "its scripts' top-level code cannot run: " + err.Error()}
		e.outcome = resultCompileFailed
		return e
	}
	e.program, e.gvk, e.outcome = p, p.GVK(), resultAccepted
	return e
}

// invalid records a Karta that did not load or validate.
func (e *entry) invalid(message string) {
	e.accepted = verdict{status: metav1.ConditionFalse, reason: ReasonInvalid, message: message}
	e.compiled = verdict{status: metav1.ConditionFalse, reason: ReasonNotAccepted, message: "not compiled: the Karta is not accepted"}
	e.outcome = resultInvalid
}

// document is the Karta part of an object as Load reads it: every
// top-level field but status, and of metadata what a Karta file would
// hold. The server's bookkeeping (uid, resourceVersion, managedFields…)
// is left out: it says nothing about the Karta and changes on every write.
func document(obj *unstructured.Unstructured) ([]byte, error) {
	doc := make(map[string]any, len(obj.Object))
	for k, v := range obj.Object {
		if k != "status" && k != "metadata" {
			doc[k] = v
		}
	}
	md := map[string]any{"name": obj.GetName()}
	if ns := obj.GetNamespace(); ns != "" {
		md["namespace"] = ns
	}
	if l := obj.GetLabels(); len(l) > 0 {
		md["labels"] = l
	}
	if a := obj.GetAnnotations(); len(a) > 0 {
		md["annotations"] = a
	}
	doc["metadata"] = md
	// encoding/json sorts map keys: equal objects give equal bytes.
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the object: %w", err)
	}
	return data, nil
}

// loadMessage renders load problems one per line as "FIELD: message".
// The source and line Load adds are left out: the document is the
// controller's re-encoding of the object, its lines are not the user's.
func loadMessage(err error) string {
	var les karta.LoadErrors
	if !errors.As(err, &les) {
		return err.Error()
	}
	lines := make([]string, len(les))
	for i, le := range les {
		lines[i] = le.Message
		if le.Field != "" {
			lines[i] = le.Field + ": " + le.Message
		}
	}
	return strings.Join(lines, "\n")
}

// problemLines renders validation problems one per line, in document
// order, as "FIELD: message" ("FIELD: warning: message").
func problemLines(ps karta.Problems) string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// truncate keeps a message within the CRD's limit, cutting at a line
// break so that no problem is shown half.
func truncate(msg string) string {
	if len(msg) <= maxMessage {
		return msg
	}
	const tail = "\n… (more problems: run karta validate on the Karta)"
	cut := msg[:maxMessage-len(tail)]
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		cut = cut[:i]
	}
	return cut + tail
}

// String names the key in logs and load errors: RESOURCE/NAME or
// RESOURCE/NAMESPACE/NAME.
func (k key) String() string {
	res := KartaResource.Resource
	if k.src > 0 {
		res = LegacyResource.Resource
	}
	if k.namespace != "" {
		return res + "/" + k.namespace + "/" + k.name
	}
	return res + "/" + k.name
}

// describe names the object in condition messages: Karta "NAME", or
// ResourceInterface "NAMESPACE/NAME".
func (k key) describe() string {
	kind := karta.KindKarta
	if k.src > 0 {
		kind = karta.KindResourceInterface
	}
	name := k.name
	if k.namespace != "" {
		name = k.namespace + "/" + name
	}
	return fmt.Sprintf("%s %q", kind, name)
}

// less orders keys: kartas before resourceinterfaces, then by namespace
// and name.
func (k key) less(o key) bool {
	if k.src != o.src {
		return k.src < o.src
	}
	if k.namespace != o.namespace {
		return k.namespace < o.namespace
	}
	return k.name < o.name
}

// gvkString renders a kind as "group/version Kind" ("v1 Pod" for core).
func gvkString(g schema.GroupVersionKind) string {
	return g.GroupVersion().String() + " " + g.Kind
}
