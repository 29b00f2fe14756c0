package karta

import (
	"strconv"
	"strings"
)

// maxListed is how many items a validation message lists: a message that
// named every sibling would grow with the square of the input when each of
// thousands of siblings gets one (6 000 components once printed 216 MB).
const maxListed = 10

// listCapped joins at most maxListed items with sep and says how many
// more there are: "a, b, c" or "a, b, …, j, and 5990 more".
func listCapped(items []string, sep string) string {
	if len(items) <= maxListed {
		return strings.Join(items, sep)
	}
	return strings.Join(items[:maxListed], sep) + sep + "and " + strconv.Itoa(len(items)-maxListed) + " more"
}
