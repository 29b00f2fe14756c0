// Command karta compiles Kartas into Lua hooks and runs them on workload
// objects. CLI.md in the project's docs is its contract.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], streams{in: os.Stdin, out: os.Stdout, err: os.Stderr}))
}
