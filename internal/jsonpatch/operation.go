package jsonpatch

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/kartalua/karta/object"
)

// Operation is one RFC 6902 operation: add, replace or remove.
type Operation struct {
	Op    string `json:"op"`   // add, replace or remove
	Path  string `json:"path"` // an RFC 6901 pointer
	Value any    `json:"value,omitempty"`
}

// MarshalJSON writes value for add and replace even when it is null, which
// omitempty alone would drop, and never for remove.
func (o Operation) MarshalJSON() ([]byte, error) {
	if o.Op == "remove" {
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{o.Op, o.Path})
	}
	return json.Marshal(struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}{o.Op, o.Path, o.Value})
}

// Pointer renders a location — member names (string) and array indexes
// (int) — as an RFC 6901 JSON pointer.
func Pointer(loc []any) string {
	var b strings.Builder
	for _, e := range loc {
		b.WriteByte('/')
		switch x := e.(type) {
		case string:
			b.WriteString(object.EscapePointerToken(x))
		case int:
			b.WriteString(strconv.Itoa(x))
		}
	}
	return b.String()
}
