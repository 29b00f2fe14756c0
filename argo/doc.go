// Package argo runs Argo CD resource health scripts in the karta sandbox,
// and tests directories laid out as Argo CD's resource_customizations.
//
// # Health scripts
//
// An Argo CD health script is a Lua chunk whose top level ends in return.
// It reads the global obj, the resource as a real table with JSON semantics
// (1-based arrays, a null member of an object absent), and returns
// {status = ..., message = ...}:
//
//	s, err := argo.Compile("health.lua", src) // compiled once; safe for concurrent use
//	h, err := s.Run(ctx, obj)                 // h.Status "Healthy", h.Message "..."
//
// Each Run gets a fresh environment over karta's read-only sandbox
// (docs/security.md; require("os") gives os.time, os.date and os.clock;
// table.getn works) and its per-call limits (1s, 10M instructions, call
// depth 200, 1 MiB strings; see Limits). The sandbox has no kube, karta or
// jq: Argo CD has none of them either.
//
// # Results, compared with Argo CD
//
// Argo CD (util/lua ExecuteHealthLua) encodes the returned table as JSON
// and decodes it into a HealthStatus. This package reads the table directly;
// where the two differ, it follows the Karta override of package
// interpreter (docs/karta.md, "Overrides and the Argo CD form"), which
// reads results with FromLua too:
//
//   - nil or an empty table: no assessment, the empty Health{}, which is
//     what Argo CD returns for both. It is not Unknown: Argo CD leaves such
//     a resource's health empty, which never makes an application's health
//     worse. A table whose status is absent or "" is read the same way,
//     keeping its message (Argo CD says Unknown, "Lua returned an invalid
//     health status"). A Karta override maps an empty status to Undefined,
//     as it maps Missing and Unknown.
//   - Any other status than Healthy, Progressing, Degraded, Suspended,
//     Missing and Unknown is an error naming the script, as in a Karta
//     override; Argo CD reports Unknown, "Lua returned an invalid health
//     status", instead.
//   - A status that is not a string, or a result that is neither a table
//     nor nil, is an error. A message that is not a string reads as empty.
//
// # Test directories
//
// RunTestDir runs a directory in Argo CD's resource-customization layout:
// <group>/<Kind>/health.lua beside health_test.yaml (<Kind>/ alone for the
// core group). See RunTestDir for how a test's script is chosen.
package argo
