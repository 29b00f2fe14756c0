package karta

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// checkText rejects bytes that YAML does not allow before the YAML library
// sees them. The library's own errors for these ("invalid leading UTF-8
// octet", "control characters are not allowed") carry no position, so
// finding them here gives the user a byte offset and a line to look at.
func checkText(data []byte) (msg string, line int, ok bool) {
	for off := 0; off < len(data); {
		r, size := utf8.DecodeRune(data[off:])
		switch {
		case r == utf8.RuneError && size <= 1:
			return fmt.Sprintf("input is not valid UTF-8 (byte offset %d); save the file as UTF-8", off), lineAt(data, off), false
		case r == 0:
			return fmt.Sprintf("input contains a NUL byte (byte offset %d); is it a binary file?", off), lineAt(data, off), false
		case !yamlPrintable(r):
			return fmt.Sprintf("input contains the control character %U (byte offset %d), which YAML does not allow; remove it", r, off), lineAt(data, off), false
		}
		off += size
	}
	return "", 0, true
}

// yamlPrintable is YAML 1.2's c-printable set, which is what the YAML
// library accepts (readerc.go).
func yamlPrintable(r rune) bool {
	switch {
	case r == 0x09, r == 0x0A, r == 0x0D:
	case r >= 0x20 && r <= 0x7E:
	case r == 0x85:
	case r >= 0xA0 && r <= 0xD7FF:
	case r >= 0xE000 && r <= 0xFFFD:
	case r >= 0x10000 && r <= 0x10FFFF:
	default:
		return false
	}
	return true
}

// lineAt returns the 1-based line of a byte offset.
func lineAt(data []byte, off int) int {
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// separatorFrom reports whether a document separator (a line starting
// with "---" followed by a blank or the end of the line) is on the given
// 1-based line or after it. It lets an error that stopped reading say
// whether the input may hold more documents.
func separatorFrom(data []byte, line int) bool {
	n := 1
	for len(data) > 0 {
		end := bytes.IndexByte(data, '\n')
		cur := data
		if end >= 0 {
			cur, data = data[:end], data[end+1:]
		} else {
			data = nil
		}
		if n >= line && isSeparator(cur) {
			return true
		}
		n++
	}
	return false
}

func isSeparator(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	rest := line[3:]
	return len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\r'
}

// isBlank reports whether the input holds only whitespace.
func isBlank(data []byte) bool {
	return len(bytes.TrimSpace(data)) == 0
}
