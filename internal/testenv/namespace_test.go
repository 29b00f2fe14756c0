package testenv

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNamespacePrefix(t *testing.T) {
	tests := []struct {
		name, testName, want string
	}{
		{"top-level test", "TestInstallCRDs", "testinstallcrds-"},
		{"subtest with underscores", "TestRevise/live_JobSet", "testrevise-live-jobset-"},
		{"runs of separators collapse", "TestGet//a__b--c", "testget-a-b-c-"},
		{"leading separators dropped", "_/Test", "test-"},
		{"nothing usable", "/_/", "test-"},
		{
			"long names cut without a trailing dash",
			"TestControllerReconcilesEveryBuiltin/dynamographdeployment_multinode",
			"testcontrollerreconcileseverybuiltin-dyn-",
		},
		{"cut right after a separator", "Test" + strings.Repeat("A", 35) + "/x", "test" + strings.Repeat("a", 35) + "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := namespacePrefix(tt.testName)
			assert.Equal(t, tt.want, got)
			assert.LessOrEqual(t, len(got), namespacePrefixMax+1)
		})
	}
}
