// Command benchreport reads `go test -bench` output (files, or standard
// input) and prints each benchmark's medians over its -count samples,
// GOMAXPROCS scaling, memory figures, the performance targets met or
// missed, and last one line per comparison (docs/performance.md):
//
//	BENCH <hook>/<workload> ns/op=<n> allocs/op=<n> vs-gojq=<ratio>x vs-go=<ratio>x [vs-karmada=<ratio>x vs-karmada-cached=<ratio>x | vs-argocd=<ratio>x]
//
// A ratio is the baseline's median ns/op over karta's: how many times
// faster karta is (below 1, slower); "-" where the baseline does not apply.
//
// Exit status: 0 printed, 1 unreadable input or no results, 2 usage.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: benchreport [file ...]  (go test -bench output; standard input without files)")
	}
	flag.Parse()
	os.Exit(run(flag.Args(), os.Stdin, os.Stdout, os.Stderr))
}

func run(files []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var readers []io.Reader
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			fmt.Fprintf(stderr, "benchreport: %v\n", err)
			return 1
		}
		defer fh.Close()
		readers = append(readers, fh)
	}
	if len(readers) == 0 {
		readers = append(readers, stdin)
	}
	res, err := parse(io.MultiReader(readers...))
	if err == nil {
		err = report(stdout, res)
	}
	if err != nil {
		fmt.Fprintf(stderr, "benchreport: %v\n", err)
		return 1
	}
	return 0
}
