// Package argo runs Argo CD resource customizations — health scripts,
// action discovery and resource actions — as Argo CD runs them, in karta's
// sandbox and limits, and tests directories laid out as Argo CD's
// resource_customizations.
//
// # Scripts
//
// Any Lua chunk is a script, as in Argo CD: it reads the global obj (and
// actionParams for an action) and its result is the last value it returns,
// nil when it returns nothing. A health script typically ends in return hs,
// or in an if … else … end with a return in each branch:
//
//	s, err := argo.Compile("health.lua", src) // compiled once; safe for concurrent use
//	h, err := s.Run(ctx, obj)                 // h.Status "Healthy", h.Message "..."
//	actions, err := d.Discover(ctx, obj)      // a discovery.lua
//	res, err := a.RunAction(ctx, obj, params) // an action.lua
//
// # What a script sees and what its result means
//
// The object goes in as Argo CD's decodeValue makes it: plain tables, a
// null member absent, a null array element left out. Results come out as
// Argo CD reads them: encoded to JSON by gopher-json's rules (an empty
// table is an empty array; mixed keys, sparse arrays, cycles, a table met
// twice and functions are errors) and unmarshaled with encoding/json:
//
//   - Health (ExecuteHealthLua): nil is no assessment (the empty Health); a
//     table that encodes to an array, or whose status or message has the
//     wrong JSON type, is no assessment too; a status that is not one of
//     Healthy, Progressing, Degraded, Suspended, Missing and Unknown — an
//     empty one included — is Unknown with the message "Lua returned an
//     invalid health status"; anything but a table or nil is an error.
//   - Discovery (ExecuteResourceActionDiscovery): a table of actions by
//     name, see Script.Discover.
//   - Actions (ExecuteResourceAction): the object itself, or a list of
//     {operation, resource}, cleaned as Argo CD cleans it; see
//     Script.RunAction.
//
// Each run gets a fresh environment over the read-only sandbox (base
// functions, string, table, math, and os with time, date and clock;
// require("os") and table.getn work) and karta's one limits type, luaapi.Limits
// (1s, 10M instructions, call depth 200, 1 MiB strings, a 64 MiB memory
// guard by default), the same as a Karta's and a Karmada customization's.
// Argo CD gives built-in health scripts its whole standard library and
// actions only base, table and os; the sandbox gives both the libraries
// above and nothing that reaches files, processes or the network.
//
// # Test directories
//
// RunTestDir runs a directory in Argo CD's layout: <group>/<Kind>/health.lua
// beside health_test.yaml, and <group>/<Kind>/actions/ with discovery.lua,
// <action>/action.lua and action_test.yaml, comparing results as Argo CD's
// own tests do. See RunTestDir.
package argo
