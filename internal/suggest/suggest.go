// Package suggest finds the closest of a set of names to a misspelt one,
// for "did you mean" hints in messages.
package suggest

// Closest returns the candidate nearest to word by edit distance
// (Levenshtein: insertions, deletions and substitutions of single bytes),
// when that distance is at most max and word is not itself a candidate. On
// a tie the earlier candidate wins. Comparison is case-sensitive, but a
// candidate differing from word only in case counts as distance 1.
func Closest(word string, candidates []string, max int) (string, bool) {
	best, bestDist := "", max+1
	for _, c := range candidates {
		if c == word {
			return "", false
		}
		d := Distance(word, c)
		if d > 0 && equalFold(word, c) {
			d = 1
		}
		if d < bestDist {
			best, bestDist = c, d
		}
	}
	return best, bestDist <= max
}

// Distance is the Levenshtein distance between a and b, in bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
