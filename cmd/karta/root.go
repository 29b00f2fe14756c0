package main

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
)

// Exit codes of docs/cli.md.
const (
	exitOK      = 0
	exitInvalid = 1 // the input was understood but is invalid
	exitUsage   = 2 // unknown flag, missing file, bad arguments
)

type streams struct {
	in  io.Reader
	out io.Writer
	err io.Writer
}

// exitError carries an exit code; its lines have been printed already
// unless msg is set.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// usageError is a usage problem (exit 2) with a message to print.
func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf(format, args...)}
}

// invalid reports that problems were printed and the command fails with 1.
func invalid() error { return &exitError{code: exitInvalid} }

func newRootCmd(s streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "karta",
		Short: "Understand any Kubernetes workload kind through a Karta",
		Long: "karta compiles a Karta (a declarative map of a workload kind, written with jq paths)\n" +
			"into sandboxed Lua hooks and runs them: pod specs, status, revisions and gang groups.",
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version prints what `karta version -o table` prints.
		Version: buildVersion(),
	}
	root.SetVersionTemplate(fmt.Sprintf("karta {{.Version}} (commit %s, %s, %s/%s)\n", buildCommit(), runtime.Version(), runtime.GOOS, runtime.GOARCH))
	root.SetIn(s.in)
	root.SetOut(s.out)
	root.SetErr(s.err)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return usageError("%v", err)
	})
	root.AddCommand(newValidateCmd(s), newCRDCmd(s), newVersionCmd(s), newBuiltinCmd(s), newCompileCmd(s), newPodsCmd(s), newStatusCmd(s), newReviseCmd(s), newGangCmd(s), newPodGroupsCmd(s), newArgoCmd(s), newKarmadaCmd(s), newServeCmd(s), newControllerCmd(s), newExporterCmd(s), newGetCmd(s), newTestCmd(s))
	root.AddCommand(newDescribeCmd(s), newStudioCmd(s))
	return root
}

var quietClientGo sync.Once

// run executes the command line and returns the exit code. Every error is
// printed as lines on standard error; there are no stack traces.
func run(args []string, s streams) int {
	quietClientGo.Do(func() {
		// client-go reports through klog (to standard error, with its own
		// line format); karta reports every error itself, once, in its
		// own format.
		klog.SetOutput(io.Discard)
		klog.LogToStderr(false)
	})
	root := newRootCmd(s)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			printLines(s.err, "karta: ", ee.msg)
		}
		return ee.code
	}
	// Errors cobra itself produces (unknown command, wrong number of
	// arguments) are usage errors.
	printLines(s.err, "karta: ", err.Error())
	return exitUsage
}

// printLines writes each line of msg on its own line, with a prefix.
func printLines(w io.Writer, prefix, msg string) {
	for _, line := range strings.Split(strings.TrimRight(msg, "\n"), "\n") {
		fmt.Fprintln(w, prefix+line)
	}
}
