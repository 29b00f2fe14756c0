// Package isolation runs untrusted Kartas in supervised worker processes:
// a hostile Karta that gets past the in-process limits (a Go stack
// overflow in a compiler, memory the guard never sees, time the deadline
// never sees) kills its worker, not the server, and the call it was
// answering gets a *WorkerError. The workers run with kernel-enforced
// limits (RLIMIT_DATA for memory, RLIMIT_CPU for CPU time, set by the
// worker on itself before it reads anything untrusted) and are restarted
// with backoff; a Karta that keeps killing workers is reported through
// Supervisor.LimitStats, which the controller's Evaluating condition reads.
//
// A worker is the server's own binary, re-executed with an environment
// variable that makes RunWorkerIfChild take over. A program that
// supervises workers must call it first thing in main (as moby's reexec):
//
//	func main() {
//		isolation.RunWorkerIfChild() // returns only in the parent
//		...
//	}
//
// and a test binary in TestMain, before m.Run. The parent sends a worker
// its Karta once, as JSON with the compile options, and then calls over
// the worker's stdin and stdout: length-prefixed JSON frames (wire.go),
// one call at a time per worker. A Supervisor keeps up to
// Options.Workers workers per Karta; more concurrent calls wait for one.
//
// Package interpreter does not import this package: an adapter (the
// webhook, the controller, the gang output, an embedder) decides which
// Programs to isolate and calls them through Supervisor.Program.
package isolation
