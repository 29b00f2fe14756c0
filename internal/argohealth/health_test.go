package argohealth

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckStatus(t *testing.T) {
	for _, word := range append(Statuses(), "") {
		assert.NoError(t, CheckStatus(word), "%q", word)
	}
	for _, word := range []string{"healthy", "Healthy ", "OK", "Running", "Undefined"} {
		err := CheckStatus(word)
		require.Error(t, err, "%q", word)
		assert.Equal(t, `Argo CD health status "`+word+`" is not one of Healthy, Progressing, Degraded, Suspended, Missing, Unknown`, err.Error())
	}
}
