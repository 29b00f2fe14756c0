package karmada

import (
	"strings"
)

// diffContext is how many unchanged lines a diff shows around a change.
const diffContext = 3

// lineDiff renders a line diff from expected to actual: "- " lines are
// expected only, "+ " lines actual only, "  " lines shared (at most
// diffContext around each change; "  ..." marks lines left out). It uses
// a longest-common-subsequence table, fine for the few hundred lines of a
// Kubernetes object.
func lineDiff(expected, actual string) string {
	a := strings.Split(expected, "\n")
	b := strings.Split(actual, "\n")
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte // ' ', '-', '+'
		text string
	}
	var lines []line
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			lines = append(lines, line{' ', a[i]})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			lines = append(lines, line{'-', a[i]}) // removals first
			i++
		default:
			lines = append(lines, line{'+', b[j]})
			j++
		}
	}
	// Keep the changes and diffContext shared lines around each.
	keep := make([]bool, len(lines))
	for k, l := range lines {
		if l.op == ' ' {
			continue
		}
		for c := max(0, k-diffContext); c <= min(len(lines)-1, k+diffContext); c++ {
			keep[c] = true
		}
	}
	var sb strings.Builder
	skipped := false
	for k, l := range lines {
		if !keep[k] {
			skipped = true
			continue
		}
		if skipped {
			sb.WriteString("  ...\n")
			skipped = false
		}
		sb.WriteByte(l.op)
		sb.WriteByte(' ')
		sb.WriteString(l.text)
		sb.WriteByte('\n')
	}
	if skipped {
		sb.WriteString("  ...\n")
	}
	return sb.String()
}
