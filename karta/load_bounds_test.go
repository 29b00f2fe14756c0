package karta

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Inputs whose node tree grows faster than their text (8 MB of empty
// objects, 100 000 documents) are refused before the YAML library builds
// it, in one error naming the limit.
func TestLoadBoundsValuesAndDocuments(t *testing.T) {
	head := "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata: {name: x}\n"
	for name, tc := range map[string]struct {
		data string
		want string
	}{
		"empty objects":  {head + "spec: {x: [" + strings.Repeat("{},", 2_000_000) + "{}]}\n", "more than the 262144 a Karta file may"},
		"many documents": {strings.Repeat(head+"spec: {}\n---\n", DefaultMaxDocuments), "documents, more than the 1000 a Karta file may"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Load([]byte(tc.data), "big.yaml")
			var le LoadErrors
			require.ErrorAs(t, err, &le)
			require.Len(t, le, 1)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err := LoadWithOptions([]byte(head+"spec: {x: [1, 2, 3]}\n"), "small.yaml", LoadOptions{MaxValues: 10})
	assert.ErrorContains(t, err, "more than the 10 a Karta file may")
}
