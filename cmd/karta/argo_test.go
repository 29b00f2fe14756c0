package main

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	argoDir     = "testdata/argo/customizations"
	rolloutLua  = argoDir + "/argoproj.io/Rollout/health.lua"
	rolloutData = argoDir + "/argoproj.io/Rollout/testdata/"
	gadgetDir   = "testdata/argo/failing/apps.example.com/Gadget/"
	deployData  = argoDir + "/apps/Deployment/actions/testdata/"
	cronData    = argoDir + "/batch/CronJob/actions/testdata/"
)

// TestGoldenArgo pins the output and exit code of karta argo, in
// TestGolden's format. Regenerate with:
// go test ./cmd/karta -run TestGoldenArgo -update
func TestGoldenArgo(t *testing.T) {
	cases := []struct {
		name string
		// stdin is the content of these files, joined as documents.
		stdin []string
		args  []string
	}{
		{"argo-health-json", nil, []string{"argo", "health", "--script", rolloutLua, "-f", rolloutData + "paused.yaml"}},
		{"argo-health-yaml", nil, []string{"argo", "health", "--script", rolloutLua, "-f", rolloutData + "invalid-spec.yaml", "-o", "yaml"}},
		{"argo-health-stdin", []string{rolloutData + "healthy.yaml", rolloutData + "scaling.yaml"}, []string{"argo", "health", "--script", rolloutLua, "-f", "-"}},
		{"argo-health-os-date", nil, []string{"argo", "health", "--script", argoDir + "/backup.example.io/Backup/health.lua", "-f", argoDir + "/backup.example.io/Backup/testdata/stale.yaml"}},
		{"argo-health-lua-error", nil, []string{"argo", "health", "--script", gadgetDir + "health.lua", "-f", gadgetDir + "testdata/no-status.yaml"}},
		{"argo-health-bad-word", nil, []string{"argo", "health", "--script", gadgetDir + "health.lua", "-f", gadgetDir + "testdata/fine.yaml"}},
		{"argo-health-one-document-fails", []string{gadgetDir + "testdata/spinning.yaml", gadgetDir + "testdata/no-status.yaml"}, []string{"argo", "health", "--script", gadgetDir + "health.lua", "-f", "-"}},
		{"argo-health-no-verdict", nil, []string{"argo", "health", "--script", "testdata/argo/not-health.lua", "-f", rolloutData + "paused.yaml"}},
		{"argo-health-missing-script", nil, []string{"argo", "health", "--script", "testdata/argo/no-such-file.lua", "-f", rolloutData + "paused.yaml"}},
		{"argo-health-no-script", nil, []string{"argo", "health", "-f", rolloutData + "paused.yaml"}},
		{"argo-health-bad-output", nil, []string{"argo", "health", "--script", rolloutLua, "-f", rolloutData + "paused.yaml", "-o", "xml"}},
		{"argo-health-table", []string{rolloutData + "healthy.yaml", rolloutData + "paused.yaml"}, []string{"argo", "health", "--script", rolloutLua, "-f", "-", "-o", "table"}},

		{"argo-test", nil, []string{"argo", "test", argoDir}},
		{"argo-test-one-folder", nil, []string{"argo", "test", argoDir + "/batch/Job"}},
		{"argo-test-failures", nil, []string{"argo", "test", "testdata/argo/failing"}},
		{"argo-test-no-tests", nil, []string{"argo", "test", "testdata/in"}},
		{"argo-test-missing-dir", nil, []string{"argo", "test", "testdata/argo/no-such-dir"}},
		{"argo-test-not-a-dir", nil, []string{"argo", "test", rolloutLua}},
		{"argo-test-no-args", nil, []string{"argo", "test"}},

		{"argo-actions-json", nil, []string{"argo", "actions", "-f", deployData + "deployment.yaml", "--dir", argoDir}},
		{"argo-actions-table", nil, []string{"argo", "actions", "-f", deployData + "deployment-paused.yaml", "--dir", argoDir, "-o", "table"}},
		{"argo-actions-stdin-yaml", []string{deployData + "deployment.yaml", cronData + "cronjob.yaml"}, []string{"argo", "actions", "-f", "-", "--dir", argoDir, "-o", "yaml"}},
		{"argo-actions-one-folder", nil, []string{"argo", "actions", "-f", cronData + "cronjob.yaml", "--dir", argoDir + "/batch/CronJob"}},
		{"argo-actions-no-actions", nil, []string{"argo", "actions", "-f", rolloutData + "paused.yaml", "--dir", argoDir}},
		{"argo-actions-no-dir", nil, []string{"argo", "actions", "-f", rolloutData + "paused.yaml"}},
		{"argo-action-pause", nil, []string{"argo", "action", "pause", "-f", deployData + "deployment.yaml", "--dir", argoDir, "-o", "yaml"}},
		{"argo-action-pause-in-a-pipe", nil, []string{"argo", "action", "pause", "-f", deployData + "deployment.yaml", "--dir", argoDir}},
		{"argo-action-scale-patch", nil, []string{"argo", "action", "scale", "-f", deployData + "deployment.yaml", "--dir", argoDir, "--param", "replicas=5", "-o", "patch"}},
		{"argo-action-resume-json", nil, []string{"argo", "action", "resume", "-f", deployData + "deployment-paused.yaml", "--dir", argoDir, "-o", "json"}},
		{"argo-action-scale-error", nil, []string{"argo", "action", "scale", "-f", deployData + "deployment.yaml", "--dir", argoDir, "--param", "replicas=many"}},
		{"argo-action-bad-param", nil, []string{"argo", "action", "scale", "-f", deployData + "deployment.yaml", "--dir", argoDir, "--param", "replicas"}},
		{"argo-action-unknown", nil, []string{"argo", "action", "wobble", "-f", deployData + "deployment.yaml", "--dir", argoDir}},
		{"argo-action-patch-of-new-style", nil, []string{"argo", "action", "create-job", "-f", cronData + "cronjob.yaml", "--dir", argoDir, "-o", "patch"}},
		{"argo-action-two-documents", []string{deployData + "deployment.yaml", cronData + "cronjob.yaml"}, []string{"argo", "action", "pause", "-f", "-", "--dir", argoDir}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, joinDocuments(t, tc.stdin), tc.args...)
			checkGolden(t, tc.name, tc.args, stdout, stderr, code)
			assert.NotContains(t, stderr, "goroutine ", "no Go stack traces, ever")
		})
	}
}

// karta argo test: the exit code follows the failures, and the last line
// is the summary.
func TestArgoTestSummary(t *testing.T) {
	for _, tc := range []struct {
		dir     string
		code    int
		summary string
	}{
		{argoDir, exitOK, "31 passed, 0 failed"},
		{"testdata/argo/failing", exitInvalid, "1 passed, 10 failed"},
	} {
		stdout, stderr, code := runCLI(t, "", "argo", "test", tc.dir)
		assert.Equal(t, tc.code, code, stderr)
		lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
		assert.Equal(t, tc.summary, lines[len(lines)-1])
	}
}

func TestArgoCommandsHaveHelp(t *testing.T) {
	root := newRootCmd(streams{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
	for _, name := range []string{"health", "test", "actions", "action"} {
		cmd, _, err := root.Find([]string{"argo", name})
		require.NoError(t, err, name)
		assert.NotEmpty(t, cmd.Short, name)
		assert.NotEmpty(t, cmd.Long, name)
		assert.Contains(t, cmd.Example, "karta argo "+name, name)
	}
}
