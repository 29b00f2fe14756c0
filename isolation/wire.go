package isolation

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	sigsjson "sigs.k8s.io/json"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// maxFrame is the largest frame either side accepts: a call carries an
// object, its pods or revisions, which the webhook already caps well
// below this (webhook.DefaultMaxRequestBytes); an answer is bounded by the
// Program's result-size limit.
const maxFrame = 64 << 20

// writeFrame writes v as one frame: its JSON's length as a 4-byte
// big-endian integer, then the JSON.
func writeFrame(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding a frame: %w", err)
	}
	if len(b) > maxFrame {
		return fmt.Errorf("frame of %d bytes exceeds the limit of %d", len(b), maxFrame)
	}
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(b)))
	if _, err := w.Write(append(hdr[:], b...)); err != nil {
		return fmt.Errorf("writing a frame: %w", err)
	}
	return nil
}

// readFrame reads one frame into v. Numbers in v's interface values
// decode as int64 when integral and float64 otherwise, as the API
// machinery decodes objects, so that a result crosses the pipe unchanged.
func readFrame(r io.Reader, v any) error {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return err // io.EOF: the other side closed between frames
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxFrame {
		return fmt.Errorf("frame of %d bytes exceeds the limit of %d", n, maxFrame)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	return decodeJSON(b, v)
}

// decodeJSON decodes with the API machinery's number convention.
func decodeJSON(b []byte, v any) error {
	return sigsjson.UnmarshalCaseSensitivePreserveInts(b, v)
}

// hello is the first frame to a worker: the Karta it serves and the
// options to compile it with. The worker answers with a reply whose
// Error is set when compiling failed.
type hello struct {
	Karta   *karta.Karta         `json:"karta"`
	Scripts []interpreter.Script `json:"scripts,omitempty"`
	Limits  interpreter.Limits   `json:"limits"`
	// AllowKindMismatch is the Program's option.
	AllowKindMismatch bool `json:"allowKindMismatch,omitempty"`
}

// request is one call: the operation and its inputs. Only the inputs the
// operation takes are set.
type request struct {
	Op Op `json:"op"`
	// TimeoutNanos is what is left of the caller's deadline (0: none);
	// the worker's call runs under it as well as the Program's limits.
	TimeoutNanos int64                  `json:"timeoutNanos,omitempty"`
	Object       map[string]any         `json:"object,omitempty"`
	Other        map[string]any         `json:"other,omitempty"` // Retain's observed object
	Pods         []map[string]any       `json:"pods,omitempty"`
	Revisions    []interpreter.Revision `json:"revisions,omitempty"`
	Replicas     int64                  `json:"replicas,omitempty"`
	Items        json.RawMessage        `json:"items,omitempty"` // AggregateStatus's
	// References are the objects the Karta's references resolved to in
	// the supervisor, which holds the resolver (a cache the worker has
	// not): the worker binds them through a static resolver.
	References []map[string]any `json:"references,omitempty"`
}

// reply is the worker's answer: the operation's result as JSON, or the
// error it ended with.
type reply struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *wireError      `json:"error,omitempty"`
	// Retire asks the supervisor to replace the worker after this call:
	// it has used half of its CPU-time limit, which counts over the
	// process's whole life.
	Retire bool `json:"retire,omitempty"`
}
