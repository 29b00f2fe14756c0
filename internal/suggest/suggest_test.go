package suggest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClosest(t *testing.T) {
	hooks := []string{"GetPodSpecs", "InterpretStatus", "InterpretHealth", "ReviseSpec", "GetGangGroups"}
	cases := []struct {
		word string
		max  int
		want string
		ok   bool
	}{
		{"InterpretStatu", 2, "InterpretStatus", true},
		{"interpretstatus", 2, "InterpretStatus", true},
		{"IntrepretStatus", 2, "InterpretStatus", true},
		{"GetPodSpec", 2, "GetPodSpecs", true},
		{"InterpretStatus", 2, "", false},
		{"helper", 2, "", false},
		{"ReviseSpecsXY", 2, "", false},
		{"ReviseSpecsX", 2, "ReviseSpec", true},
	}
	for _, tc := range cases {
		t.Run(tc.word, func(t *testing.T) {
			got, ok := Closest(tc.word, hooks, tc.max)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"ownerName", "ownerRef", 4}, {"luaScrip", "luaScript", 1},
	} {
		assert.Equal(t, tc.want, Distance(tc.a, tc.b), "%s/%s", tc.a, tc.b)
		assert.Equal(t, tc.want, Distance(tc.b, tc.a), "%s/%s", tc.b, tc.a)
	}
}
