package object_test

import (
	"fmt"
	"log"

	"github.com/kartalua/karta/object"
)

// Objects from YAML or JSON in one call: every document, and every item of
// a List (what kubectl get -o yaml prints), as unstructured objects ready
// for a Program's hooks.
func ExampleDecodeObjects() {
	data := []byte(`apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Pod, metadata: {name: worker-0, namespace: ml}}
- {apiVersion: v1, kind: Pod, metadata: {name: worker-1, namespace: ml}}
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: mnist, namespace: ml}
spec: {runPolicy: {schedulingPolicy: {minAvailable: 2}}}
`)
	objs, err := object.DecodeObjects(data, "objects.yaml")
	if err != nil {
		log.Fatal(err) // an *object.DecodeError: objects.yaml:LINE: message
	}
	for _, o := range objs {
		fmt.Println(o.GetKind(), o.GetNamespace()+"/"+o.GetName())
	}
	_, err = object.DecodeObjects([]byte("kind: Pod\nmetadata:\n  labels: [a, b\n"), "pod.yaml")
	fmt.Println(err)
	// Output:
	// Pod ml/worker-0
	// Pod ml/worker-1
	// PyTorchJob ml/mnist
	// pod.yaml:3: invalid YAML: did not find expected ',' or ']'
}
