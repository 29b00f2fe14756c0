// Package object reads and writes workload objects (and pods) as the karta
// command sees them: YAML or JSON, one or many documents, decoded into Go
// JSON values whose numbers keep their literal spelling (json.Number), with
// the YAML tree kept beside them so that a revised object is written back
// with the same keys, key order and number spellings wherever it did not
// change. Embedding programs that hold
// *unstructured.Unstructured do not need this package.
package object
