// Package testobj reads the repository's example files as objects for
// tests: one decoder (object.Decode, which refuses duplicate keys and
// oversized input as every input path of karta does), so a test reads an
// example the way the CLI and the webhook do.
package testobj

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/object"
)

// Read returns the one object of the YAML or JSON file at path; the test
// fails when the file cannot be read or holds anything but one object.
func Read(t testing.TB, path string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	docs, err := object.Decode(data, path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(docs) != 1 {
		t.Fatalf("%s: %d documents, want one object", path, len(docs))
	}
	return &unstructured.Unstructured{Object: docs[0].Object}
}
