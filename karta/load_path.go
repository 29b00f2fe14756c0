package karta

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// pathElem is one step of a field path: a map key or a list index.
type pathElem struct {
	key     string
	index   int
	isIndex bool
}

// fieldPath locates a value in a document, e.g.
// spec.structureDefinition.childComponents[1].ownerRef.
type fieldPath []pathElem

// child returns the path extended by a map key. It copies, so that sibling
// paths built from one parent never share storage.
func (p fieldPath) child(key string) fieldPath {
	out := make(fieldPath, len(p), len(p)+1)
	copy(out, p)
	return append(out, pathElem{key: key})
}

// at returns the path extended by a list index.
func (p fieldPath) at(i int) fieldPath {
	out := make(fieldPath, len(p), len(p)+1)
	copy(out, p)
	return append(out, pathElem{index: i, isIndex: true})
}

// String renders the path in the API server's style. A key that would be
// ambiguous after a dot (it is empty or holds anything but letters,
// digits, '_' and '-') is written as ["key"].
func (p fieldPath) String() string {
	var b strings.Builder
	for _, e := range p {
		switch {
		case e.isIndex:
			b.WriteString("[")
			b.WriteString(strconv.Itoa(e.index))
			b.WriteString("]")
		case plainKey(e.key):
			if b.Len() > 0 {
				b.WriteString(".")
			}
			b.WriteString(e.key)
		default:
			b.WriteString("[")
			b.WriteString(strconv.Quote(e.key))
			b.WriteString("]")
		}
	}
	return b.String()
}

func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// last returns the final map key of the path, "" when it ends in an index.
func (p fieldPath) last() string {
	if len(p) == 0 || p[len(p)-1].isIndex {
		return ""
	}
	return p[len(p)-1].key
}

// jsonPathAtOffset finds the value of a JSON text that ends at offset (for
// a scalar) or whose opening bracket ends at offset (for a map or list).
// encoding/json reports type errors with such an offset but with a field
// path that leaves out list indices, so the path is rebuilt from the
// tokens. The text is one we produced with json.Marshal, so it is valid.
func jsonPathAtOffset(data []byte, offset int64) (fieldPath, bool) {
	type frame struct {
		array   bool
		index   int
		key     string
		wantKey bool
	}
	var stack []frame
	current := func() fieldPath {
		var p fieldPath
		for _, f := range stack {
			if f.array {
				p = p.at(f.index)
			} else {
				p = p.child(f.key)
			}
		}
		return p
	}
	// valueDone moves the innermost container past the value just read.
	valueDone := func() {
		if len(stack) == 0 {
			return
		}
		top := &stack[len(stack)-1]
		if top.array {
			top.index++
		} else {
			top.wantKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		end := dec.InputOffset()
		if len(stack) > 0 && !stack[len(stack)-1].array && stack[len(stack)-1].wantKey {
			if key, ok := tok.(string); ok {
				stack[len(stack)-1].key = key
				stack[len(stack)-1].wantKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
			continue
		}
		if end == offset {
			return current(), true
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{wantKey: true})
		case json.Delim('['):
			stack = append(stack, frame{array: true})
		default:
			valueDone()
		}
		if end > offset {
			return nil, false
		}
	}
}
