package workload_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
	"github.com/kartalua/karta/workload"
)

// read decodes the objects of a YAML file: documents and List items.
func read(file string) []*unstructured.Unstructured {
	data, err := os.ReadFile(file)
	if err != nil {
		log.Fatal(err)
	}
	docs, err := object.Decode(data, file)
	if err != nil {
		log.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, it := range object.Items(docs) {
		out = append(out, &unstructured.Unstructured{Object: it})
	}
	return out
}

// The tree of a running PyTorchJob with its pods: the built-in Karta for
// its kind, the pods placed under their components, one gang, and the
// pods of the namespace that are not the job's.
func ExampleDescribe() {
	ctx := context.Background()
	reg, err := builtin.Registry(interpreter.Options{})
	if err != nil {
		log.Fatal(err)
	}
	job := read("../examples/pytorchjob/running.yaml")[0]
	pods := read("../examples/pytorchjob/pods.yaml")
	p, err := reg.Lookup(job.GroupVersionKind())
	if err != nil {
		log.Fatal(err)
	}
	tree, err := workload.Describe(ctx, p, job, pods)
	if err != nil {
		log.Fatal(err)
	}
	workload.Walk(tree, func(n *workload.Node, depth int) bool {
		f := n.Fields
		line := fmt.Sprintf("%s%s %q", strings.Repeat("  ", depth), n.Kind, n.Name)
		switch n.Kind {
		case workload.KindWorkload:
			line += " status=" + f.Status
		case workload.KindInstance:
			line += fmt.Sprintf(" existing=%d expected=%d", *f.Existing, *f.Expected)
		case workload.KindPod:
			if f.Reason != "" {
				line += " unmatched: " + f.Reason
			} else {
				line += " phase=" + f.Phase
			}
		case workload.KindGroup:
			line += fmt.Sprintf(" present=%d minMember=%d", *f.Present, *f.MinMember)
		}
		fmt.Println(line)
		return true
	})
	// Output:
	// Workload "mistral-7b-sft" status=Running
	//   Component "pytorchjob"
	//     Component "master"
	//       Instance "" existing=1 expected=1
	//         Pod "mistral-7b-sft-master-0" phase=Running
	//     Component "worker"
	//       Instance "" existing=3 expected=3
	//         Pod "mistral-7b-sft-worker-0" phase=Running
	//         Pod "mistral-7b-sft-worker-1" phase=Running
	//         Pod "mistral-7b-sft-worker-2" phase=Running
	//   Group "pg-9b1e5c3a-24f7-4d8e-a6b0-53c2e7f91d04-job" present=4 minMember=4
	//     Group "master" present=1 minMember=1
	//     Group "worker" present=3 minMember=3
	//   Pod "mistral-dev-0" unmatched: no component selector matches
	//   Pod "mistral-7b-sft-eval-5vglx" unmatched: no component selector matches
}
