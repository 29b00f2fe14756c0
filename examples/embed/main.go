// Command embed is a scheduler-like program that uses karta as a library:
// it finds the built-in Karta for a workload by its kind, groups the
// workload's pods into gangs, and decides which gangs could be admitted
// (every group has at least minMember pods present) — the questions a gang
// scheduler asks of any workload kind, without per-kind Go code.
//
//	go run ./examples/embed -f examples/pytorchjob/running.yaml --pods examples/pytorchjob/pods.yaml
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
)

func main() {
	objFile := flag.String("f", "examples/pytorchjob/running.yaml", "the workload object")
	podsFile := flag.String("pods", "examples/pytorchjob/pods.yaml", "its pods (a List or several documents)")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *objFile, *podsFile); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, objFile, podsFile string) error {
	// Compile every built-in once; a real scheduler keeps the registry for
	// its lifetime and swaps Programs in it when Kartas change.
	reg, err := builtin.Registry(interpreter.Options{})
	if err != nil {
		return err
	}
	obj, err := readObjects(objFile)
	if err != nil {
		return err
	}
	pods, err := readObjects(podsFile)
	if err != nil {
		return err
	}
	workload := obj[0]
	prog, ok := reg.Get(workload.GroupVersionKind())
	if !ok {
		return fmt.Errorf("no built-in Karta for %s", workload.GroupVersionKind())
	}
	status, err := prog.InterpretStatus(ctx, workload)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s %s/%s is %s (Karta %q)\n", workload.GetKind(), workload.GetNamespace(), workload.GetName(), status.Status, prog.Name())

	gangs, err := prog.GetGangGroups(ctx, workload, pods)
	if err != nil {
		return err
	}
	for _, g := range gangs.Groups {
		verdict := "admit"
		if int64(len(g.Pods)) < g.MinMember {
			verdict = "wait"
		}
		fmt.Fprintf(w, "%-5s %s: %d of minMember %d pods present\n", verdict, g.Name, len(g.Pods), g.MinMember)
	}
	for _, u := range gangs.Unmatched {
		fmt.Fprintf(w, "skip  %s: %s\n", u.Pod, u.Reason)
	}
	return nil
}

// readObjects reads the objects of a YAML or JSON file, expanding Lists.
func readObjects(file string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	docs, err := object.Decode(data, file)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, it := range object.Items(docs) {
		out = append(out, &unstructured.Unstructured{Object: it})
	}
	return out, nil
}
