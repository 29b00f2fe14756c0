package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/kartalua/karta/studio"
)

// defaultStudioAddress is where karta studio listens unless told: this
// machine only.
const defaultStudioAddress = "127.0.0.1:7878"

type studioFlags struct {
	address         string
	maxRequestBytes int64
	concurrency     int
}

func newStudioCmd(s streams) *cobra.Command {
	var f studioFlags
	cmd := &cobra.Command{
		Use:   "studio [--address ADDR] [--max-request-bytes N] [--concurrency N]",
		Short: "Serve karta studio: write and try a Karta in the browser, and see the workload",
		Long: "Serve karta studio, a web page to write a Karta and try it on objects and pods, on the\n" +
			"engine of the other commands: the Karta's problems at their line as you type (and a pasted\n" +
			"CRD's, as --crd), the status with its matched rules, the pod specs, the workload tree drawn,\n" +
			"the gangs, each gang scheduler's objects, a revision's patch as a diff, the Karmada and\n" +
			"Argo CD exports with their answers beside karta's and the compiled Lua, with every built-in\n" +
			"and its example states to start from (docs/studio.md). The page and its scripts are in the\n" +
			"binary; nothing is fetched from elsewhere and no file is read: it evaluates what the page\n" +
			"sends, each request at most --max-request-bytes, each hook (and each export's script)\n" +
			"under the interpreter's limits, at most --concurrency evaluations at once (more wait up to\n" +
			"a second, or are answered 429).\n" +
			"It listens on 127.0.0.1 unless --address says otherwise, and prints the page's URL.\n" +
			"SIGINT or SIGTERM stops it.",
		Example: "  karta studio\n" +
			"  karta studio --address 127.0.0.1:0",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runStudio(cmd.Context(), s, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.address, "address", defaultStudioAddress, "the `ADDR` to listen on (host:port; port 0 picks a free one)")
	fl.Int64Var(&f.maxRequestBytes, "max-request-bytes", studio.DefaultMaxRequestBytes, "the largest request body `N` accepted (larger: 413)")
	fl.IntVar(&f.concurrency, "concurrency", 0, "the most evaluations at once (`N`; 0: half the CPUs, at least one)")
	return cmd
}

func runStudio(ctx context.Context, s streams, f *studioFlags) error {
	if f.maxRequestBytes <= 0 {
		return usageError("--max-request-bytes must be positive, not %d", f.maxRequestBytes)
	}
	if f.concurrency < 0 {
		return usageError("--concurrency must not be negative, not %d", f.concurrency)
	}
	ln, err := net.Listen("tcp", f.address)
	if err != nil {
		return reported(s, fmt.Errorf("--address: %w", err))
	}
	srv := newHTTPServer(s, studio.New(studio.Options{MaxRequestBytes: f.maxRequestBytes, Concurrency: f.concurrency}))
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(s.out, "karta studio: http://%s/\n", ln.Addr())
	return untilStopped(ctx, s, srv, served, stop)
}
