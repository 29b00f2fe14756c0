package interpreter_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/luaapi"
	"github.com/kartalua/karta/object"
)

// These examples are docs/embedding.md's code, verbatim (a test checks
// it), run from this folder: the paths are relative to it.

// readObjects reads the objects of a file: every document and List item.
func readObjects(file string) []*unstructured.Unstructured {
	data, err := os.ReadFile(file)
	if err != nil {
		log.Fatal(err)
	}
	objs, err := object.DecodeObjects(data, file)
	if err != nil {
		log.Fatal(err) // *object.DecodeError: FILE:LINE: message
	}
	return objs
}

// Load a Karta, check it, compile it, and call its hooks on an object.
func Example() {
	ctx := context.Background()

	// Load: strict YAML or JSON, one Karta per document. Every problem of
	// every document comes back at once as karta.LoadErrors.
	kartas, err := karta.LoadFile("../examples/kartas/trainjob.yaml")
	if err != nil {
		log.Fatal(err)
	}
	// Check: validate and analyse every jq expression once. A Karta with
	// errors is a *karta.ValidationError listing them; warnings are in
	// checked.Warnings.
	checked, err := karta.Check(kartas[0], interpreter.ValidateOptions())
	if err != nil {
		log.Fatal(err)
	}
	// Compile: a Program is immutable and safe for concurrent use; keep it.
	prog, err := interpreter.CompileChecked(checked, interpreter.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// Call: each hook takes the object and returns a typed result.
	job := readObjects("../examples/tutorial-trainjob/running.yaml")[0]
	status, err := prog.InterpretStatus(ctx, job)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status:", status.Status, status.Matched)
	specs, err := prog.GetPodSpecs(ctx, job)
	if err != nil {
		log.Fatal(err)
	}
	for _, it := range specs.Items {
		fmt.Printf("%s: %d replicas\n", it.Component, *it.Scale.Replicas)
	}
	gangs, err := prog.GetGangGroups(ctx, job, readObjects("../examples/tutorial-trainjob/pods.yaml"))
	if err != nil {
		log.Fatal(err)
	}
	for _, g := range gangs.Groups {
		fmt.Printf("gang %s: %d pods, at least %d\n", g.Name, len(g.Pods), g.MinMember)
	}
	// Output:
	// status: Running [Running]
	// launcher: 1 replicas
	// worker: 4 replicas
	// gang pg-3f6b2a90-7c1d-4e8f-a2b3-c4d5e6f7a8b9-gang: 5 pods, at least 4
}

// A registry maps kinds to Programs. Lookups take no lock; Put swaps a
// Program in atomically (calls in flight finish on the old one), so a
// process picks up a changed Karta without a restart. Built-ins are lazy:
// listed without compiling, compiled on first use, once.
func ExampleRegistry() {
	ctx := context.Background()
	reg, err := builtin.Registry(interpreter.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(reg.Entries()) > 10, len(reg.Compiled())) // listed, nothing compiled yet

	job := readObjects("../examples/pytorchjob/running.yaml")[0]
	prog, err := reg.Lookup(job.GroupVersionKind()) // compiles the PyTorchJob built-in
	if err != nil || prog == nil {
		log.Fatal("no Karta for ", job.GroupVersionKind(), err)
	}
	fmt.Println(prog.Name(), len(reg.Compiled()))

	// Hot swap: a Karta of one's own for the same kind replaces the
	// built-in (a controller does this when a Karta object changes).
	mine, err := karta.LoadFile("../examples/kartas/pytorchjob.yaml")
	if err != nil {
		log.Fatal(err)
	}
	p, err := interpreter.Compile(mine[0], interpreter.Options{})
	if err != nil {
		log.Fatal(err)
	}
	reg.Put(p)
	now, _ := reg.Get(job.GroupVersionKind())
	st, err := now.InterpretStatus(ctx, job)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(now == p, st.Status)

	// A Karta of one's own may be lazy too: registered by name and kind,
	// compiled on its first lookup.
	train, err := karta.LoadFile("../examples/kartas/trainjob.yaml")
	if err != nil {
		log.Fatal(err)
	}
	k := train[0]
	root := k.Spec.StructureDefinition.RootComponent.Kind.GVK()
	reg.PutLazy(root, k.Name, func() (*interpreter.Program, error) {
		return interpreter.Compile(k, interpreter.Options{})
	})
	lazy, err := reg.LookupName("example-trainjob")
	fmt.Println(lazy.GVK(), err)
	// Output:
	// true 0
	// pytorchjob 1
	// true Running
	// example.com/v1, Kind=TrainJob <nil>
}

// The errors an embedder branches on: each names the Karta (and the hook)
// and carries what a program needs to act on it.
func Example_errors() {
	ctx := context.Background()
	explain := func(err error) string {
		var (
			load     karta.LoadErrors
			invalid  *karta.ValidationError
			decode   *object.DecodeError
			mismatch *interpreter.KindMismatchError
			limit    *luaapi.LimitError
			revise   *interpreter.ReviseError
			missing  *interpreter.NotDefinedError
			gang     *interpreter.GangObjectError
			hook     *interpreter.HookError
		)
		switch {
		case err == nil:
			return "ok"
		case errors.As(err, &load): // a Karta file that does not load
			return fmt.Sprintf("load: %d problem(s), the first at line %d", len(load), load[0].Line)
		case errors.As(err, &invalid): // a Karta that does not validate
			return fmt.Sprintf("invalid: %d problem(s), the first at %s", len(invalid.Problems), invalid.Problems[0].Field)
		case errors.As(err, &decode): // an object file that does not decode
			return fmt.Sprintf("decode: %s line %d", decode.Source, decode.Line)
		case errors.As(err, &mismatch): // the object is not of the Karta's kind
			return fmt.Sprintf("kind: %s is not %s", mismatch.Got.Kind, mismatch.Want.Kind)
		case errors.As(err, &limit): // the call crossed a limit: a hostile or broken Karta
			return fmt.Sprintf("limit: %s %s (%s)", limit.Kind, limit.Limit, limit.Hook)
		case errors.As(err, &revise): // every write that failed, all or nothing
			return fmt.Sprintf("revise: %d error(s)", len(revise.Errors))
		case errors.As(err, &missing): // the Karta does not define the operation
			return fmt.Sprintf("not defined: %s", missing.Hook)
		case errors.As(err, &gang): // an instance or scale path failed on the object
			return fmt.Sprintf("gang: %s", gang.Field)
		case errors.As(err, &hook): // any other failure of a hook, a script's included
			return fmt.Sprintf("hook %s failed", hook.Hook)
		}
		return "other: " + err.Error()
	}

	_, err := karta.Load([]byte("apiVersion: run.ai/v1alpha1\nkind: Karta\nspec:\n  nope: 1\n"), "k.yaml")
	fmt.Println(explain(err))
	broken, _ := karta.LoadFile("../examples/kartas/broken.yaml")
	_, err = interpreter.Compile(broken[0], interpreter.Options{})
	fmt.Println(explain(err))
	_, err = object.DecodeObjects([]byte("a: [1, 2\n"), "obj.yaml")
	fmt.Println(explain(err))

	train, _ := karta.LoadFile("../examples/kartas/trainjob.yaml")
	prog, _ := interpreter.Compile(train[0], interpreter.Options{})
	pytorch := readObjects("../examples/pytorchjob/running.yaml")[0]
	_, err = prog.InterpretStatus(ctx, pytorch)
	fmt.Println(explain(err))

	job := readObjects("../examples/tutorial-trainjob/running.yaml")[0]
	_, err = prog.ReviseSpec(ctx, job, []interpreter.Revision{{Component: "ps", Patch: map[string]any{}}})
	fmt.Println(explain(err))

	looping, _ := interpreter.Compile(train[0], interpreter.Options{
		Scripts: []interpreter.Script{{Name: "loop.lua", Source: "function InterpretStatus(obj) while true do end end"}},
		Limits:  interpreter.Limits{MaxInstructions: 100000},
	})
	_, err = looping.InterpretStatus(ctx, job)
	fmt.Println(explain(err))

	failing, _ := interpreter.Compile(train[0], interpreter.Options{
		Scripts: []interpreter.Script{{Name: "fail.lua", Source: `function GetPodSpecs(obj) error("no workers") end`}},
	})
	_, err = failing.GetPodSpecs(ctx, job)
	fmt.Println(explain(err))
	fmt.Println(err)
	// Output:
	// load: 1 problem(s), the first at line 4
	// invalid: 9 problem(s), the first at spec.structureDefinition.rootComponent.statusDefinition.statusMappings.completed[0].byConditions
	// decode: obj.yaml line 2
	// kind: PyTorchJob is not TrainJob
	// revise: 1 error(s)
	// limit: instructions 100000 (InterpretStatus)
	// hook GetPodSpecs failed
	// karta "example-trainjob": GetPodSpecs: script:fail.lua:1: no workers
}
