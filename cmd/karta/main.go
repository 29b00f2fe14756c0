// Command karta compiles Kartas into Lua hooks and runs them on workload
// objects. docs/cli.md is its reference.
package main

import (
	"os"

	"github.com/kartalua/karta/isolation"
)

func main() {
	isolation.RunWorkerIfChild() // a worker of serve's or controller's (--isolate) serves and exits
	os.Exit(run(os.Args[1:], streams{in: os.Stdin, out: os.Stdout, err: os.Stderr}))
}
