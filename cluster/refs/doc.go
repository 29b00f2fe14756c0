// Package refs resolves the references of Kartas (docs/karta.md,
// "References") from the informer caches of a live cluster: a Cache is an
// interpreter.Resolver for the controller, the gang output, karta serve
// and the CLI's live commands.
//
// A Cache watches the kinds the registered Kartas reference, cluster-wide,
// with dynamic informers whose lists and watches go through a
// watchguard.Guard like every other informer of the process. It answers a
// hook from its store only: a kind it does not watch, or whose first list
// has not arrived or failed (forbidden, not served), is an error, which
// the interpreter turns into the documented absent state (null or []) with
// a warning. So a hook never waits on the API server. The watches follow
// the registry (Watch, WatchRegistry): a kind no Karta references any more
// is no longer watched and its store is dropped.
//
// The objects a Cache returns are its store's, shared with every caller:
// they are read, never modified (the interpreter converts them on the way
// into a hook).
package refs
