// Package studio is karta studio: a local web app to write and try a Karta
// in the browser (docs/studio.md). It serves an embedded page (plain HTML,
// CSS and JavaScript, nothing fetched from elsewhere) and a JSON API over
// the engine the CLI uses: a Karta checked with its problems at their line
// and column, and the hooks' answers for the objects and pods of the
// request — status, pod specs, gangs, the workload tree (package workload),
// each gang scheduler's objects (package podgroups) and the compiled Lua —
// with the built-ins and their example states to start from, and a folder
// of the inputs with a karta_test.yaml that expects those answers.
//
// It is an adapter: it imports the core, never the reverse. It reads no
// file: everything it evaluates comes in the request, bounded in size as
// `karta serve` bounds its requests, each hook call under the interpreter's
// per-call limits, and at most Options.Concurrency evaluations at once
// (isolation.Fair, as `karta serve` bounds each kind).
package studio
