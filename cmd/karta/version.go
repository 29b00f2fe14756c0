package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Stamped at build time by `make build` and the Dockerfile:
//
//	-ldflags "-X main.version=v1.2.3 -X main.commit=<git commit>"
var (
	version = ""
	commit  = ""
)

// versionInfo is what `karta version -o json` prints.
type versionInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

func newVersionCmd(s streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the karta version, the commit it was built from and the Go version",
		Long: "Print the karta version, the commit it was built from, the Go version and the platform:\n" +
			"one line with -o table (the default on a terminal), {version, commit, go, platform} with\n" +
			"-o json (the default in a pipe) or yaml.",
		Example: "  karta version\n" +
			"  karta version -o json",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			format, err := outputFormat(output, []string{formatJSON, formatYAML, formatTable}, defaultFormat(s.out))
			if err != nil {
				return err
			}
			v := versionInfo{Version: buildVersion(), Commit: buildCommit(), Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
			return writeResults(s.out, format, []result{{value: v, table: func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "karta %s (commit %s, %s, %s)\n", v.Version, v.Commit, v.Go, v.Platform)
				return err
			}}})
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "json, yaml or table (default: table on a terminal, else json)")
	return cmd
}

// buildVersion is the -X version, else the module version go install
// recorded, else "devel".
func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// buildCommit is the -X commit, else the revision go build recorded from
// the VCS (with "-dirty" for uncommitted changes), else "unknown".
func buildCommit() string {
	if commit != "" {
		return commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if rev != "" {
			if modified == "true" {
				rev += "-dirty"
			}
			return rev
		}
	}
	return "unknown"
}
