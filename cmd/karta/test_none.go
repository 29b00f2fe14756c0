package main

import "fmt"

// nothingTested is the error of a test runner (test, argo test, karmada
// test) whose DIR held no test case: "0 passed, 0 failed" is no pass, and
// a wrong folder must not look like a green run.
func nothingTested(s streams, dir, want string) error {
	fmt.Fprintf(s.err, "%s: no test case found in it or below (want %s)\n", dir, want)
	return invalid()
}
