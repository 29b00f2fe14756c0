package isolation

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/kartalua/karta/interpreter"
)

// The environment a supervisor starts a worker with.
const (
	// envWorker marks the process as a worker: RunWorkerIfChild serves
	// and exits.
	envWorker = "KARTA_ISOLATION_WORKER"
	// envMemory and envCPU are the limits the worker sets on itself
	// (bytes; seconds).
	envMemory = "KARTA_ISOLATION_MAX_MEMORY"
	envCPU    = "KARTA_ISOLATION_MAX_CPU"
)

// Exit codes of a worker that ends on its own.
const (
	exitSetup    = 3 // the limits could not be set, or the protocol broke
	exitProtocol = 4
)

// RunWorkerIfChild serves as a worker and exits when the process was
// started as one by a Supervisor; otherwise it returns at once. Call it at
// the top of main (and of TestMain) in every program that supervises
// workers: the supervisor re-executes that program's binary.
func RunWorkerIfChild() {
	if os.Getenv(envWorker) != "1" {
		return
	}
	os.Exit(serveWorker(os.Stdin, os.Stdout))
}

// serveWorker is the worker: it limits itself, then compiles the Karta of
// the hello frame and answers calls until its input closes. Its standard
// output carries only frames: anything else written to os.Stdout goes to
// standard error.
func serveWorker(in io.Reader, out *os.File) int {
	os.Stdout = os.Stderr
	mem, _ := strconv.ParseInt(os.Getenv(envMemory), 10, 64)
	cpu, _ := strconv.ParseInt(os.Getenv(envCPU), 10, 64)
	if err := limitSelf(mem, cpu); err != nil {
		fmt.Fprintf(os.Stderr, "karta worker: %v\n", err)
		return exitSetup
	}
	r := bufio.NewReader(in)
	w := bufio.NewWriter(out)
	send := func(rp reply) bool {
		if err := writeFrame(w, rp); err != nil {
			fmt.Fprintf(os.Stderr, "karta worker: %v\n", err)
			return false
		}
		return w.Flush() == nil
	}

	var h hello
	if err := readFrame(r, &h); err != nil {
		fmt.Fprintf(os.Stderr, "karta worker: reading the Karta: %v\n", err)
		return exitProtocol
	}
	p, err := interpreter.Compile(h.Karta, interpreter.Options{Scripts: h.Scripts, Limits: h.Limits, PoolSize: 1, AllowKindMismatch: h.AllowKindMismatch})
	if err != nil {
		send(reply{Error: toWire(err)})
		return 0
	}
	if !send(reply{}) {
		return exitProtocol
	}
	for {
		var req request
		if err := readFrame(r, &req); err != nil {
			if err == io.EOF {
				return 0 // the supervisor closed the worker
			}
			fmt.Fprintf(os.Stderr, "karta worker: reading a call: %v\n", err)
			return exitProtocol
		}
		rp := call(p, &req)
		rp.Retire = cpu > 0 && cpuUsed() >= time.Duration(cpu)*time.Second/2
		if !send(rp) {
			return exitProtocol
		}
	}
}

// call runs one request under what is left of the caller's deadline.
func call(p *interpreter.Program, req *request) reply {
	ctx := context.Background()
	if req.TimeoutNanos > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(req.TimeoutNanos))
		defer cancel()
	}
	// The supervisor resolved the references, and warned of the absent
	// ones: the worker binds what it was given, silently.
	// The hooks and Karmada's operations (karmada.ForProgram) bind them.
	ctx = interpreter.WithResolver(ctx, interpreter.NewStaticResolver(objs(req.References)...), nil)
	return runOp(ctx, p, req)
}
