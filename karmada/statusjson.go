package karmada

import (
	"strconv"
	"unicode/utf8"
)

// decodeStatusJSON decodes a member cluster's raw status as
// json.Unmarshal into an interface decodes it (objects as map[string]any,
// later duplicate keys winning; arrays as []any; numbers as float64), for
// AggregateStatus' items, which are decoded on every call: encoding/json's
// reflection and its validation pass before decoding were a sixth of such
// a call. It handles the common text only — strings without escapes or
// control characters, whose non-ASCII bytes are valid UTF-8, numbers
// strconv.ParseFloat reads exactly as encoding/json does, nesting below
// statusJSONDepth — and says ok false for anything else (an escape, text
// that is not JSON, a number out of range), which the caller then hands
// to json.Unmarshal for its value or its error
// (TestDecodeStatusJSONIsJSONUnmarshal, FuzzDecodeStatusJSON).
func decodeStatusJSON(data []byte) (v any, ok bool) {
	d := statusDecoder{data: data}
	v, ok = d.value(0)
	if !ok {
		return nil, false
	}
	d.space()
	return v, d.i == len(d.data)
}

// statusJSONDepth bounds the nesting decodeStatusJSON handles, far below
// encoding/json's own limit (10000), so that its errors stay encoding/json's.
const statusJSONDepth = 1000

type statusDecoder struct {
	data []byte
	i    int
}

func (d *statusDecoder) space() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// literal consumes word if the text continues with it.
func (d *statusDecoder) literal(word string) bool {
	if len(d.data)-d.i < len(word) || string(d.data[d.i:d.i+len(word)]) != word {
		return false
	}
	d.i += len(word)
	return true
}

func (d *statusDecoder) value(depth int) (any, bool) {
	d.space()
	if d.i >= len(d.data) || depth > statusJSONDepth {
		return nil, false
	}
	switch c := d.data[d.i]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		return d.string()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	}
	return nil, false
}

func (d *statusDecoder) object(depth int) (any, bool) {
	d.i++ // {
	m := map[string]any{}
	d.space()
	if d.i < len(d.data) && d.data[d.i] == '}' {
		d.i++
		return m, true
	}
	for {
		d.space()
		if d.i >= len(d.data) || d.data[d.i] != '"' {
			return nil, false
		}
		k, ok := d.string()
		if !ok {
			return nil, false
		}
		d.space()
		if d.i >= len(d.data) || d.data[d.i] != ':' {
			return nil, false
		}
		d.i++
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		m[k.(string)] = v
		if more, ok := d.separator('}'); !more {
			return m, ok
		}
	}
}

// separator reads what follows a member or an element: a comma (more
// true) or the container's closing byte (more false, ok true).
func (d *statusDecoder) separator(closing byte) (more, ok bool) {
	d.space()
	if d.i >= len(d.data) {
		return false, false
	}
	switch d.data[d.i] {
	case ',':
		d.i++
		return true, true
	case closing:
		d.i++
		return false, true
	}
	return false, false
}

func (d *statusDecoder) array(depth int) (any, bool) {
	d.i++ // [
	a := []any{}
	d.space()
	if d.i < len(d.data) && d.data[d.i] == ']' {
		d.i++
		return a, true
	}
	for {
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		if more, ok := d.separator(']'); !more {
			return a, ok
		}
	}
}

// string reads a string without escapes; its non-ASCII bytes must be
// valid UTF-8 (encoding/json replaces invalid ones).
func (d *statusDecoder) string() (any, bool) {
	start := d.i + 1
	ascii := true
	for j := start; j < len(d.data); j++ {
		switch c := d.data[j]; {
		case c == '"':
			s := d.data[start:j]
			if !ascii && !utf8.Valid(s) {
				return nil, false
			}
			d.i = j + 1
			return string(s), true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// number reads JSON's number grammar, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?,
// as a float64 (ParseFloat, as encoding/json converts it).
func (d *statusDecoder) number() (any, bool) {
	start := d.i
	digits := func() int {
		n := 0
		for d.i < len(d.data) && d.data[d.i] >= '0' && d.data[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.data[d.i] == '-' {
		d.i++
	}
	if d.i < len(d.data) && d.data[d.i] == '0' {
		d.i++
	} else if digits() == 0 {
		return nil, false
	}
	if d.i < len(d.data) && d.data[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return nil, false
		}
	}
	if d.i < len(d.data) && (d.data[d.i] == 'e' || d.data[d.i] == 'E') {
		d.i++
		if d.i < len(d.data) && (d.data[d.i] == '+' || d.data[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(string(d.data[start:d.i]), 64)
	if err != nil {
		return nil, false
	}
	return f, true
}
