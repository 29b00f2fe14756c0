package luaapi

import (
	"encoding/json"
	"errors"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
	luar "layeh.com/gopher-luar"

	"github.com/kartalua/karta/internal/testobj"
)

// FuzzValueBridge sends arbitrary JSON across the Go↔Lua bridge and reads
// it back, by JSON semantics (a null member of an object is absent in Lua,
// numbers are float64):
//
//   - ToLuaTable, then FromLua, gives the value back;
//   - a Lua walker that reads the tables with pairs, # and indexing, and
//     the views with # and indexing, sees the value.
//
// Values nested deeper than MaxDepth are a *ConvertError, never a crash;
// numbers beyond float64 (1e400) are a *ConvertError as well. The raw bytes
// also travel as a string, so invalid UTF-8 is covered.
func FuzzValueBridge(f *testing.F) {
	for _, seed := range []string{
		`{}`, `[]`, `null`, `0`, `"x"`, `true`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a":"b"},"annotations":null},"spec":{"containers":[{"name":"c","image":"i","args":[],"env":[{"name":"N","value":"1"}]}]}}`,
		`{"a":null,"b":[null,1,null],"c":{"d":null},"e":[],"f":{},"g":[[],{},[{}]]}`,
		`[-0, 0.1, 1e308, 5e-324, 9007199254740993, 12345678901234567890, -1.5e-7, 1e21]`,
		`[1e400]`,
		`{"":"empty key","\u0000":"nul","é":"\ud800","k\"q":"\u2028<>&"}`,
		`{"replicas":2.5,"minReplicas":"NaN","maxReplicas":"Infinity","n":2147483648}`,
		strings.Repeat(`{"a":[`, 25) + `1` + strings.Repeat(`]}`, 25),
		strings.Repeat(`[`, MaxDepth) + strings.Repeat(`]`, MaxDepth),
		strings.Repeat(`[`, MaxDepth+1) + strings.Repeat(`]`, MaxDepth+1),
		strings.Repeat(`{"k":`, MaxDepth+1) + `null` + strings.Repeat(`}`, MaxDepth+1),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, ok := testobj.FuzzJSON(data)
		if !ok {
			return
		}
		L := lua.NewState()
		defer L.Close()
		depth := testobj.Depth(v)
		finite := allFinite(v)

		tb, err := ToLuaTable(L, v)
		if depth > MaxDepth || !finite {
			var ce *ConvertError
			require.True(t, errors.As(err, &ce), "a *ConvertError, got %v", err)
			return
		}
		require.NoError(t, err)
		want := canonical(v)
		back, err := FromLua(L, tb)
		require.NoError(t, err)
		require.Equal(t, want, canonical(back), "ToLuaTable then FromLua")

		if depth <= 40 {
			require.Equal(t, want, walkInLua(t, L, tb), "a Lua walk of the tables")
			require.Equal(t, want, walkInLua(t, L, ToLuaView(L, v)), "a Lua walk of the view")
		}
	})
}

// allFinite reports whether every number of v that the bridge converts is
// a finite float64 (a null member of an object is not converted).
func allFinite(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if !allFinite(e) {
				return false
			}
		}
	case []any:
		for _, e := range x {
			if !allFinite(e) {
				return false
			}
		}
	case json.Number:
		_, err := strconv.ParseFloat(string(x), 64)
		return err == nil
	}
	return true
}

// canonical prints a Go JSON value with Lua tables' JSON semantics: object
// members that are null are absent, keys sorted, numbers by float64 value.
func canonical(v any) string {
	var b strings.Builder
	writeCanonical(&b, v)
	return b.String()
}

func writeCanonical(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		b.WriteString(strconv.Quote(x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k, e := range x {
			if e != nil {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(k) + ":")
			writeCanonical(b, x[k])
		}
		b.WriteByte('}')
	default:
		f, ok := GoNumber(v)
		if !ok {
			b.WriteString("<not JSON>")
			return
		}
		b.WriteString(formatNumber(f))
	}
}

func formatNumber(f float64) string {
	if f == 0 {
		return "0" // -0 is 0 in JSON
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// walker prints a JV the way canonical prints Go values, reading tables
// with pairs, # and indexing and views with # and indexing (pairs does not
// see views; keys lists a view's keys, as the jq runtime's iteration
// does).
const walker = `
local function enc(v)
  local k = kind(v)
  if k == "null" then return "null" end
  if k == "boolean" then return tostring(v) end
  if k == "number" then return num(v) end
  if k == "string" then return quote(v) end
  local parts = {}
  if k == "array" then
    local n = #v
    for i = 1, n do parts[i] = enc(v[i]) end
    if not isview(v) then
      local count = 0
      for _ in pairs(v) do count = count + 1 end
      if count ~= n then error("array of length " .. n .. " has " .. count .. " entries") end
    end
    return "[" .. table.concat(parts, ",") .. "]"
  end
  local ks = {}
  if isview(v) then
    for _, key in ipairs(keys(v)) do ks[#ks + 1] = key end
  else
    for key in pairs(v) do ks[#ks + 1] = key end
  end
  table.sort(ks)
  for _, key in ipairs(ks) do
    local e = v[key]
    if e ~= nil then parts[#parts + 1] = quote(key) .. ":" .. enc(e) end
  end
  return "{" .. table.concat(parts, ",") .. "}"
end
return enc(value)
`

func walkInLua(t *testing.T, L *lua.LState, lv lua.LValue) string {
	t.Helper()
	// The walker's helpers are plain Go functions; gopher-luar converts
	// their arguments and results (a lua.LValue passes through as it is).
	L.SetGlobal("value", lv)
	L.SetGlobal("kind", luar.New(L, func(v lua.LValue) string { return kindOf(L, v).String() }))
	L.SetGlobal("num", luar.New(L, formatNumber))
	L.SetGlobal("quote", luar.New(L, strconv.Quote))
	L.SetGlobal("isview", luar.New(L, func(v lua.LValue) bool { _, ok := ViewOf(v); return ok }))
	L.SetGlobal("keys", luar.New(L, func(v lua.LValue) *lua.LTable {
		view, _ := ViewOf(v)
		out := L.NewTable()
		for k := range view.Object() {
			out.Append(lua.LString(k))
		}
		return out
	}))
	require.NoError(t, L.DoString(walker))
	s := L.Get(-1).String()
	L.Pop(1)
	return s
}
