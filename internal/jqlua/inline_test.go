package jqlua

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestInlineLocals: a local named once, on the next line of its block,
// becomes its expression there only where nothing before it on that line
// could raise, change anything, or be skipped, and where an operand keeps
// its meaning.
func TestInlineLocals(t *testing.T) {
	tests := []rewriteCase{
		{
			name: "a chain of field reads",
			in: `local spec = J.field(v, "spec")
local replicas = J.field(spec, "replicas")
J.emit(out, replicas)`,
			want: `J.emit(out, J.field(J.field(v, "spec"), "replicas"))`,
		},
		{
			name: "an operand after atoms",
			in: `local m = J.modulo(n, 1024)
local t = J.minus(n, m)`,
			want: `local t = J.minus(n, J.modulo(n, 1024))`,
		},
		{
			name: "a whole right side may be any expression",
			in: `local s = J.tostring(m) .. "Mi"
obj.memory = s`,
			want: `obj.memory = J.tostring(m) .. "Mi"`,
		},
		{
			name: "a whole condition may be any expression",
			in: `local b = J.cmpn(r, 0) > 0
if b then
  x = 1
end`,
			want: `if J.cmpn(r, 0) > 0 then
  x = 1
end`,
		},
		{
			name: "not an operand without its own parentheses",
			in: `local s = a .. "b"
local t = J.plus(s, c)`,
		},
		{
			name: "not after a call it would overtake",
			in: `local k = J.field(v, "k")
local t = J.plus(J.field(v, "j"), k)`,
		},
		{
			name: "not where it might not be evaluated",
			in: `local x = J.field(v, "x")
if out == nil then return x end`,
		},
		{
			name: "not a local named twice",
			in: `local x = J.field(v, "x")
local y = J.plus(x, x)`,
		},
		{
			name: "not a local used again later",
			in: `local x = J.field(v, "x")
local y = J.tostring(x)
J.emit(out, x)`,
		},
		{
			name: "not into another block",
			in: `local x = J.field(v, "x")
if c then
  y = J.tostring(x)
end`,
		},
		{
			name: "not a local assigned again",
			in: `local x = J.field(v, "x")
x = J.tostring(v)`,
		},
		{
			name: "a string or a field of the same name is not a use",
			in: `local x = J.field(v, "x")
obj.x = J.field(v, "x")
J.emit(out, x)`,
		},
		{
			name: "not a function",
			in: `local f = function(x)
  return x
end`,
		},
		{
			name: "the value appended to an array",
			in: `local num = J.tonumber(x)
arr[#arr + 1] = num`,
			want: `arr[#arr + 1] = J.tonumber(x)`,
		},
		{
			name: "an operand after concatenated atoms",
			in: `local str = J.tostring(x)
local t = "a[" .. str .. "]"`,
			want: `local t = "a[" .. J.tostring(x) .. "]"`,
		},
		{
			name: "a constructor's field after atom fields, any expression",
			in: `local t_2 = J.plus_string("a", p) .. "b"
local obj = J.object_of({path = "x", ["a-b"] = t, s = t_2, n = 1})`,
			want: `local obj = J.object_of({path = "x", ["a-b"] = t, s = J.plus_string("a", p) .. "b", n = 1})`,
		},
		{
			name: "an array constructor's item after atom items",
			in: `local least = J.min(arr)
local a = J.array_of({"x", least})`,
			want: `local a = J.array_of({"x", J.min(arr)})`,
		},
		{
			name: "not a field after a field it would overtake",
			in: `local t_2 = J.min(arr)
local obj = J.object_of({a = J.field(v, "a"), b = t_2})`,
		},
		{
			name: "not an append to an array read by a call",
			in: `local num = J.tonumber(x)
arr[J.length(arr) + 1] = num`,
		},
	}
	runRewrites(t, tests, inlineLocals)
}

// TestWholeCall: only a call whose parentheses span the expression is an
// operand as it is.
func TestWholeCall(t *testing.T) {
	for e, want := range map[string]bool{
		`J.field(v, "a")`:             true,
		`f(g(x), ")")`:                true,
		`J.cmpn(x, 0) > 0`:            false,
		`J.f(a) .. J.g(b)`:            false,
		`function(x)`:                 false,
		`(x)`:                         false,
		`J.f(a, "(")`:                 true,
		`type(b) == "table" and b.x`:  false,
		`J.tostring(x) == J.f(y, "")`: false,
	} {
		assert.Equal(t, want, wholeCall(e), e)
	}
}

// TestInlineLocalsIdempotent: a chain folds whole in one pass (a merged
// line goes into the next in turn), and a second pass changes nothing.
func TestInlineLocalsIdempotent(t *testing.T) {
	in := strings.Join([]string{
		`local a = J.field(v, "a")`,
		`local b = J.field(a, "b")`,
		`local c = J.tostring(b)`,
		`J.emit(out, c)`,
	}, "\n")
	once := inlineLocals(in)
	assert.Equal(t, `J.emit(out, J.tostring(J.field(J.field(v, "a"), "b")))`, once)
	assert.Equal(t, once, inlineLocals(once))
}

// TestElseIfs: an else whose block is one if alone is an elseif; an else
// with anything more in its block stays.
func TestElseIfs(t *testing.T) {
	tests := []rewriteCase{
		{
			name: "a chain",
			in: `if a then
  t = 1
else
  if b then
    t = 2
  else
    if c then
      t = 3
    else
      t = 4
    end
  end
end`,
			want: `if a then
  t = 1
elseif b then
  t = 2
elseif c then
  t = 3
else
  t = 4
end`,
		},
		{
			name: "an inner block keeps its depth below the elseif",
			in: `if J.eq(x, y) then
  found = true
else
  if b then
    for _, x in J.each(v) do
      k(x)
    end
  end
end`,
			want: `if J.eq(x, y) then
  found = true
elseif b then
  for _, x in J.each(v) do
    k(x)
  end
end`,
		},
		{
			name: "an else of nothing",
			in: `if b then
  J.emit(out, 1)
else
  -- empty
end`,
			want: `if b then
  J.emit(out, 1)
end`,
		},
		{
			name: "not with a statement before the if",
			in: `if a then
  t = 1
else
  local b = J.f(v)
  if b ~= NULL then
    t = 2
  end
end`,
		},
		{
			name: "not with a statement after the if",
			in: `if a then
  t = 1
else
  if b then
    t = 2
  end
  t = 3
end`,
		},
	}
	runRewrites(t, tests, elseIfs)
}

// rewriteCase is a rewrite's input and output ("": left as it is).
type rewriteCase struct{ name, in, want string }

func runRewrites(t *testing.T, tests []rewriteCase, rewrite func(string) string) {
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want == "" {
				want = tt.in
			}
			assert.Equal(t, want, rewrite(tt.in))
		})
	}
}

// TestAndOrLocals: the local a jq and or or computes through an if is
// the Lua and or or of the if's condition and the assigned value.
func TestAndOrLocals(t *testing.T) {
	runRewrites(t, []rewriteCase{
		{
			name: "and",
			in: `local b = false
if n == 5 then
  b = J.index(s, 1) == "spec"
end`,
			want: `local b = n == 5 and J.index(s, 1) == "spec"`,
		},
		{
			name: "and keeps an or its operand",
			in: `local b = false
if x == NULL or x == false then
  b = a == 1 or a == 2
end`,
			want: `local b = (x == NULL or x == false) and (a == 1 or a == 2)`,
		},
		{
			name: "or undoes the if's negation",
			in: `local b = true
if not (dataset ~= NULL) then
  b = J.startswith(name, "torchtune-")
end`,
			want: `local b = dataset ~= NULL or J.startswith(name, "torchtune-")`,
		},
		{
			name: "or negates a condition that is no negation",
			in: `local b = true
if x == NULL or x == false then
  b = y
end`,
			want: `local b = not (x == NULL or x == false) or y`,
		},
		{
			name: "not with more in the if",
			in: `local b = false
if c then
  local k = J.field(v, "k")
  b = k == 1
end`,
		},
		{
			name: "not another local's assignment",
			in: `local b = false
if c then
  d = true
end`,
		},
	}, andOrLocals)
}

// TestNegation: not c as an operand of or.
func TestNegation(t *testing.T) {
	for c, want := range map[string]string{
		`not b`:                    `b`,
		`not (x ~= NULL)`:          `x ~= NULL`,
		`not (a) and (b)`:          `not (not (a) and (b))`,
		`x == NULL or x == false`:  `not (x == NULL or x == false)`,
		`not J.has(x, "k")`:        `not (not J.has(x, "k"))`,
		`not (a == "(" or b == 1)`: `a == "(" or b == 1`,
	} {
		assert.Equal(t, want, negation(c), c)
	}
}

// TestShortIfs: an if of one simple statement is one line; one with a
// block, an else or a long line is not.
func TestShortIfs(t *testing.T) {
	runRewrites(t, []rewriteCase{
		{
			name: "a default",
			in: `local n = J.field(v, "n")
if n == NULL or n == false then
  n = 1
end`,
			want: `local n = J.field(v, "n")
if n == NULL or n == false then n = 1 end`,
		},
		{
			name: "not a block in the if",
			in: `if b then
  for _, x in J.each(v) do J.emit(out, x) end
end`,
		},
		{
			name: "not with an else",
			in: `if b then
  t = 1
else
  t = 2
end`,
		},
		{
			name: "not a local, whose scope the if is",
			in: `if b then
  local t = 1
end`,
		},
		{
			name: "not a long line",
			in: `if replicatedJobStatus == NULL or replicatedJobStatus == false then
  replicatedJobStatus = J.array()
end`,
		},
	}, shortIfs)
}

// TestUnreadObjects: an object the accessor never reads, returns or emits
// goes, with its stores, only when every store is of a local or a
// literal; an object read, emitted or stored into with a call stays.
func TestUnreadObjects(t *testing.T) {
	runRewrites(t, []rewriteCase{
		{
			name: "a carrier of values from one pipe to the next",
			in: `for _, x in J.each(keys) do
  local obj = J.object()
  obj.r = v
  obj.i = x
  J.emit(out, J.index(J.field(v, "spec"), x))
end`,
			want: `for _, x in J.each(keys) do
  J.emit(out, J.index(J.field(v, "spec"), x))
end`,
		},
		{
			name: "stores of literals and quoted keys",
			in: `local obj_2 = J.object()
obj_2["a-b"] = "x"
obj_2.n = -1.5
obj_2.z = NULL
return J.one(out, 1)`,
			want: `return J.one(out, 1)`,
		},
		{
			name: "not an object emitted",
			in: `local obj = J.object()
obj.r = v
J.emit(out, obj)`,
		},
		{
			name: "not an object read",
			in: `local obj = J.object()
obj.r = v
local r = J.field(obj, "r")`,
		},
		{
			name: "not a store of a call, which could raise",
			in: `local obj = J.object()
obj.r = J.field(v, "r")
return J.one(out, 1)`,
		},
		{
			name: "not a store of an expression",
			in: `local obj = J.object()
obj.s = "a" .. str
return J.one(out, 1)`,
		},
		{
			name: "a constructor of locals and literals",
			in: `local obj = J.object_of({r = v, i = x, ["a-b"] = "x, y = 1", n = -1})
return J.one(out, 1)`,
			want: `return J.one(out, 1)`,
		},
		{
			name: "not a constructor of a call",
			in: `local obj = J.object_of({r = v, i = J.field(v, "i")})
return J.one(out, 1)`,
		},
		{
			name: "not a constructor read",
			in: `local obj = J.object_of({r = v})
return J.one(out, obj)`,
		},
	}, unreadObjects)
}

// TestIndexRuns: consecutive locals read from one local by number
// literals are one declaration; a read of another local, by a string or
// a computed key, at another indentation or of a name of the run ends it.
func TestIndexRuns(t *testing.T) {
	runRewrites(t, []rewriteCase{
		{
			name: "a chain's keys",
			in: `local item_2 = J.index(s, 2)
local item_3 = J.index(s, 1)
J.emit(out, J.index(J.index(t, item_3), item_2))`,
			want: `local item_2, item_3 = J.index(s, 2), J.index(s, 1)
J.emit(out, J.index(J.index(t, item_3), item_2))`,
		},
		{
			name: "runs end at another base, key or block",
			in: `  local a = J.index(s, 0)
  local b = J.index(s, -1)
  local c = J.index(u, 1)
  local d = J.index(s, k)
  local e = J.index(s, 2)
    local f = J.index(s, 3)`,
			want: `  local a, b = J.index(s, 0), J.index(s, -1)
  local c = J.index(u, 1)
  local d = J.index(s, k)
  local e = J.index(s, 2)
    local f = J.index(s, 3)`,
		},
		{
			name: "not a read of a name of the run",
			in: `local a = J.index(s, 0)
local b = J.index(a, 1)`,
		},
	}, indexRuns)
}
