package textdiff

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestUnified(t *testing.T) {
	expected := "a\nb\nc\nd\ne\nf\ng\nh\ni\n"
	actual := "a\nb\nc\nd\nE\nf\ng\nh\ni\n"
	assert.Equal(t, "@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n", Unified(expected, actual))
	assert.Equal(t, "@@ -1,2 +1 @@\n x\n-y\n", Unified("x\ny", "x"))
	assert.Equal(t, "", Unified("same\n", "same"))
}
