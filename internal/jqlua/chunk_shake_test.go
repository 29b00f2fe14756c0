package jqlua

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/yuin/gopher-lua/parse"
)

func TestShakeChunk(t *testing.T) {
	const chunk = `local NULL = J.null
local Q = {}

-- .spec.replicas
Q[1] = function(v, out) J.emit(out, J.index(v, "spec")) end

-- .status.phase
Q[2] = function(v, out) J.emit(out, NULL) end
local kube = require("kube")
local function helper(x) return x end
local function unused() return helper(1) end
function GetReplicas(obj)
  return helper(Q[1](obj)), kube.accuratePodRequirements(obj)
end
function ReflectStatus(obj) return obj.status end
`
	tests := []struct {
		name        string
		src         string
		roots       []string
		keep, leave []string
	}{
		{
			name:  "a root keeps what it names, and its accessors one by one",
			src:   chunk,
			roots: []string{"GetReplicas"},
			keep:  []string{"local Q = {}", "-- .spec.replicas\nQ[1] = ", "local kube", "local function helper", "function GetReplicas"},
			leave: []string{"Q[2]", "-- .status.phase", "unused", "ReflectStatus", "local NULL"},
		},
		{
			name:  "a root that names nothing keeps itself alone",
			src:   chunk,
			roots: []string{"ReflectStatus"},
			keep:  []string{"function ReflectStatus"},
			leave: []string{"Q[1]", "Q[2]", "kube", "helper", "GetReplicas", "local Q"},
		},
		{
			name:  "statements that define nothing are kept, with what they name",
			src:   "local function a() return 1 end\nlocal function b() return 2 end\nlocal x = a()\nif x then print(x) end\nreturn b()\n",
			keep:  []string{"local function a", "local function b", "local x = a()", "if x then", "return b()"},
			leave: nil,
		},
		{
			name:  "a definition only an unkept one names is left out",
			src:   "local function a() return 1 end\nlocal x = a()\nprint(1)\n",
			keep:  []string{"print(1)"},
			leave: []string{"local function a", "local x"},
		},
		{
			name:  "every definition of a needed name is kept",
			src:   "local function f() return 1 end\nlocal function f() return 2 end\nF = f\nprint(F)\n",
			keep:  []string{"return 1", "return 2", "F = f", "print(F)"},
			leave: nil,
		},
		{
			name:  "a chunk that does not parse is returned whole",
			src:   "function GetReplicas(obj\n",
			roots: []string{"GetReplicas"},
			keep:  []string{"function GetReplicas(obj\n"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ShakeChunk(tc.src, tc.roots)
			for _, k := range tc.keep {
				assert.Contains(t, got, k)
			}
			for _, l := range tc.leave {
				assert.NotContains(t, got, l)
			}
		})
	}
}

// TestShakeChunkKeepsEveryByteOfAWholeChunk: with every statement needed,
// the chunk comes back unchanged, comments and blank lines included.
func TestShakeChunkKeepsEveryByteOfAWholeChunk(t *testing.T) {
	src := "-- head\n\nlocal a = 1 -- trailing\n\n-- about b\nlocal b = a\nprint(b)\n-- tail\n"
	assert.Equal(t, src, ShakeChunk(src, nil))
}

func TestChunkNames(t *testing.T) {
	names := ChunkNames("local x = Q[12](v) .. E[3] -- Z[4]\nJ.index(t.f, 'k')\n")
	for _, n := range []string{"x", "Q", "Q[12]", "v", "E", "E[3]", "J.index", "t"} {
		assert.Contains(t, names, n)
	}
	for _, n := range []string{"Z[4]", "f", "k", "index"} {
		assert.NotContains(t, names, n)
	}
}

// FuzzShakeChunk: whatever a chunk that parses is, the shaken chunk
// parses, and is made of its statements in order (a subsequence of its
// text).
func FuzzShakeChunk(f *testing.F) {
	f.Add("local function a() return Q[1] end\nQ[1] = 2\nfunction R() return a() end\n", "R")
	f.Add("-- c\nlocal x, y = 1, 2\nif x then return y end\n", "")
	f.Add("E[1] = function(ins) return run(Q[3], ins[1], \"x\") end\nQ[3] = nil\n", "E[1]")
	f.Fuzz(func(t *testing.T, src, root string) {
		if _, err := parse.Parse(strings.NewReader(src), "fuzz"); err != nil {
			return
		}
		got := ShakeChunk(src, []string{root})
		if _, err := parse.Parse(strings.NewReader(got), "shaken"); err != nil {
			t.Fatalf("the shaken chunk does not parse: %v\n%s", err, got)
		}
		rest := src
		for _, l := range strings.SplitAfter(got, "\n") {
			i := strings.Index(rest, l)
			if i < 0 {
				t.Fatalf("line %q is not in the chunk, in order", l)
			}
			rest = rest[i+len(l):]
		}
	})
}
