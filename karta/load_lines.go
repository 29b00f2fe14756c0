package karta

import (
	"bytes"

	"github.com/kartalua/karta/internal/yamlerr"
)

// checkText rejects bytes that YAML does not allow before the YAML library
// sees them, with their line (yamlerr.CheckText).
func checkText(data []byte) (msg string, line int, ok bool) { return yamlerr.CheckText(data) }

// separatorFrom reports whether a document separator is on the given
// 1-based line or after it (yamlerr.SeparatorFrom).
func separatorFrom(data []byte, line int) bool { return yamlerr.SeparatorFrom(data, line) }

// isBlank reports whether the input holds only whitespace.
func isBlank(data []byte) bool {
	return len(bytes.TrimSpace(data)) == 0
}
