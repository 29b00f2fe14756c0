package karta

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wideKarta is a Karta with n child components, each an instance of what
// broke the messages that listed every sibling (issue 28): with no
// ownerRef, pod-bearing without a componentTypeSelector, and in an
// ownership cycle.
func wideKarta(n int, child func(i int) string) string {
	var b strings.Builder
	b.WriteString(`apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: wide}
spec:
  structureDefinition:
    rootComponent:
      name: root
      kind: {group: x.io, version: v1, kind: X}
    childComponents:
`)
	for i := range n {
		b.WriteString(child(i))
	}
	return b.String()
}

// Validation messages list at most maxListed siblings, so the output grows
// with the input, not with its square: 6 000 children once printed 216 MB.
func TestWideKartaMessagesAreBounded(t *testing.T) {
	const n = 6000
	for name, child := range map[string]func(i int) string{
		"no ownerRef": func(i int) string {
			return fmt.Sprintf("    - name: c%d\n      kind: {group: \"\", version: v1, kind: Pod}\n", i)
		},
		"pod-bearing without a selector": func(i int) string {
			return fmt.Sprintf("    - name: c%d\n      kind: {group: \"\", version: v1, kind: Pod}\n      ownerRef: root\n      specDefinition: {podSpecPath: .spec}\n", i)
		},
		"ownership cycle": func(i int) string {
			return fmt.Sprintf("    - name: c%d\n      kind: {group: \"\", version: v1, kind: Pod}\n      ownerRef: c%d\n", i, (i+1)%n)
		},
	} {
		t.Run(name, func(t *testing.T) {
			src := wideKarta(n, child)
			ks, err := Load([]byte(src), "wide.yaml")
			require.NoError(t, err)
			require.Len(t, ks, 1)
			problems := Validate(ks[0])
			require.NotEmpty(t, problems)
			total, capped := 0, false
			for _, p := range problems {
				total += len(p.String())
				capped = capped || strings.Contains(p.Message, fmt.Sprintf("and %d more", n-maxListed)) ||
					strings.Contains(p.Message, fmt.Sprintf("and %d more", n+1-maxListed))
				assert.Less(t, len(p.String()), 600, "one message lists at most %d siblings: %.300s", maxListed, p.String())
			}
			assert.Less(t, total, 4*len(src), "the messages grow with the input")
			assert.True(t, capped, "a message says how many more siblings there are")
		})
	}
}

func TestListCapped(t *testing.T) {
	assert.Equal(t, "a, b", listCapped([]string{"a", "b"}, ", "))
	items := strings.Split("a b c d e f g h i j k l", " ")
	assert.Equal(t, "a, b, c, d, e, f, g, h, i, j, and 2 more", listCapped(items, ", "))
}
