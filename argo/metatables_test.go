package argo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/luaapi"
)

// Argo CD's runtime opens the base library, so its scripts may use
// metatables: CronJob's create-job deep-copies with
// setmetatable(copy, getmetatable(orig)).
func TestMetatablesAsArgoCDGivesThem(t *testing.T) {
	obj := map[string]any{"spec": map[string]any{"jobTemplate": map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}}}}}
	for _, tc := range []struct{ name, body, want string }{
		{"a deep copy of obj (lazy tables read as plain ones)", `
local function copy(o)
  if type(o) ~= "table" then return o end
  local t = {}
  for k, v in pairs(o) do t[k] = copy(v) end
  return setmetatable(t, getmetatable(o))
end
local c = copy(obj.spec.jobTemplate.metadata)
return {status = "Healthy", message = c.labels.a .. " " .. tostring(getmetatable(obj))}`, "b nil"},
		{"a metatable the script set is its own", `
local mt = {__index = function(t, k) return k .. "!" end}
local t = setmetatable({}, mt)
return {status = "Healthy", message = t.x .. " " .. tostring(getmetatable(t) == mt)}`, "x! true"},
		{"__metatable protects, as in Lua", `
local t = setmetatable({}, {__metatable = "locked"})
local ok = pcall(setmetatable, t, {})
return {status = "Healthy", message = getmetatable(t) .. " " .. tostring(ok)}`, "locked false"},
		{"setmetatable on obj fills it first", `
setmetatable(obj.spec, {__index = function() return "dflt" end})
return {status = "Healthy", message = tostring(obj.spec.jobTemplate ~= nil) .. " " .. obj.spec.other}`, "true dflt"},
		{"strings have no metatable to hand out", `return {status = "Healthy", message = tostring(getmetatable("x"))}`, "nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := run(t, tc.body, luaapi.Limits{}, obj)
			require.NoError(t, err)
			assert.Equal(t, tc.want, h.Message)
		})
	}
}

// Hostile: the sandbox's own metatables stay out of reach, so no run can
// change the environment, the libraries or the next run.
func TestMetatablesKeepTheSandbox(t *testing.T) {
	for _, tc := range []struct{ name, body, err string }{
		{"the environment's is hidden", `return {status = tostring(getmetatable(_G))}`, ""},
		{"the environment's cannot be replaced", `setmetatable(_G, {}) return {}`, "cannot change a protected metatable"},
		{"a library's cannot be replaced", `setmetatable(string, {}) return {}`, "cannot change a protected metatable"},
		{"a non-table metatable", `setmetatable({}, 1) return {}`, "nil or table expected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := run(t, tc.body, luaapi.Limits{}, nil)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, StatusUnknown, h.Status, "nil is no word: the metatable was not handed out")
		})
	}

}
