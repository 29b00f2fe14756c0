package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/spf13/pflag"

	"github.com/kartalua/karta/gangoutput"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/isolation"
	"github.com/kartalua/karta/webhook"
)

// The values of --isolate.
const (
	isolateUntrusted = "untrusted"
	isolateAll       = "all"
	isolateNone      = "none"
)

// fairQueue is how many requests of one kind may wait for a slot of
// --karta-concurrency, and fairWait how long each may wait; the others are
// answered 429.
const (
	fairQueue = 64
	fairWait  = time.Second
)

// isolateFlags are the flags of the servers' containment (serve and
// controller): which Kartas run in worker processes, the workers' memory,
// and each kind's concurrent evaluations.
type isolateFlags struct {
	mode        string
	memoryMiB   int64
	concurrency int
}

func (f *isolateFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.mode, "isolate", isolateUntrusted, "which Kartas run in worker processes under kernel limits, as a `MODE`: untrusted (every Karta not built in), all, or none (docs/security.md, \"Isolation\")")
	fl.Int64Var(&f.memoryMiB, "worker-memory", isolation.DefaultMaxMemory>>20, "a worker process's memory limit in `MiB` (RLIMIT_DATA)")
	fl.IntVar(&f.concurrency, "karta-concurrency", 0, "the most evaluations of one kind's Karta at once (`N`; its workers, when isolated; 0: half the CPUs, at least one); more wait in a bounded queue or are answered 429")
}

// kartaConcurrency is --karta-concurrency; by default half of the CPUs,
// so that one kind's Karta leaves the other half to the others.
func (f *isolateFlags) kartaConcurrency() int {
	if f.concurrency > 0 {
		return f.concurrency
	}
	return max(1, runtime.GOMAXPROCS(0)/2)
}

func (f *isolateFlags) check() error {
	switch f.mode {
	case isolateUntrusted, isolateAll, isolateNone:
	default:
		return usageError("--isolate must be untrusted, all or none, not %q", f.mode)
	}
	if f.memoryMiB <= 0 {
		return usageError("--worker-memory must be positive, not %d", f.memoryMiB)
	}
	if f.concurrency < 0 {
		return usageError("--karta-concurrency must not be negative, not %d", f.concurrency)
	}
	return nil
}

// fair is the webhook's per-kind bound.
func (f *isolateFlags) fair() *isolation.Fair {
	return isolation.NewFair(f.kartaConcurrency(), fairQueue, fairWait)
}

// apply sets k's workers: none with --isolate=none, else a Supervisor of
// the flags' limits that runs every Program (all) or those trusted does
// not accept (untrusted). The caller closes the Supervisor.
func (f *isolateFlags) apply(k *webhook.Kartas, trusted func(*interpreter.Program) bool) (*isolation.Supervisor, error) {
	if f.mode == isolateNone {
		return nil, nil
	}
	sup, err := isolation.NewSupervisor(isolation.Options{MaxMemory: f.memoryMiB << 20, Workers: f.kartaConcurrency()})
	if err != nil {
		return nil, err
	}
	k.Workers = sup
	if f.mode == isolateUntrusted {
		k.Isolate = func(p *interpreter.Program) bool { return !trusted(p) }
	}
	return sup, nil
}

// clientCAConfig makes tc require client certificates signed by a CA of
// the PEM file (mTLS).
func clientCAConfig(tc *tls.Config, file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("--client-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return fmt.Errorf("--client-ca %s: no PEM certificate in it", file)
	}
	tc.ClientCAs = pool
	tc.ClientAuth = tls.RequireAndVerifyClientCert
	return nil
}

// gangHooks runs the gang output's calls of the Programs k isolates in
// k's workers, as the webhook's; nil (the Programs themselves) without
// workers.
func gangHooks(k webhook.Kartas) func(*interpreter.Program) gangoutput.Hooks {
	if k.Workers == nil {
		return nil
	}
	return func(p *interpreter.Program) gangoutput.Hooks {
		if k.Isolated(p) {
			return k.Workers.Program(p)
		}
		return p
	}
}
