package interpreter_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/argo"
	"github.com/kartalua/karta/gangoutput"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/karta/schemacheck"
)

// TestNilInputs calls every public entry point that takes a Karta, a
// checked Karta, a Program or a CRD by pointer with nil: each must answer
// with an error (or its documented zero answer), never panic.
func TestNilInputs(t *testing.T) {
	errCases := []struct {
		name string
		call func() error
		is   error // the error wrapped, when the package has one
	}{
		{"karta.Check", func() error { _, err := karta.Check(nil, karta.ValidateOptions{}); return err }, karta.ErrNoKarta},
		{"interpreter.Compile", func() error { _, err := interpreter.Compile(nil, interpreter.Options{}); return err }, karta.ErrNoKarta},
		{"interpreter.CompileChecked", func() error {
			_, err := interpreter.CompileChecked(nil, interpreter.Options{})
			return err
		}, karta.ErrNoKarta},
		{"interpreter.CompileChecked of an empty Checked", func() error {
			_, err := interpreter.CompileChecked(&karta.Checked{}, interpreter.Options{})
			return err
		}, karta.ErrNoKarta},
		{"argo.ExportProgram", func() error { _, err := argo.ExportProgram(nil); return err }, interpreter.ErrNoProgram},
		{"karmada.Export", func() error { _, err := karmada.Export(nil); return err }, interpreter.ErrNoProgram},
		{"schemacheck.FromCRD", func() error { _, err := schemacheck.FromCRD(nil); return err }, nil},
		{"schemacheck.NewSet", func() error { _, err := schemacheck.NewSet(nil); return err }, nil},
		{"schemacheck.ServedIn", func() error {
			_, err := schemacheck.ServedIn(nil, karta.GroupVersionKind{Kind: "Job"}.GVK())
			return err
		}, schemacheck.ErrNoCRD},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = tc.call() })
			require.Error(t, err)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
		})
	}

	t.Run("karta.Analyze", func(t *testing.T) {
		c, problems := karta.Analyze(nil, karta.ValidateOptions{})
		assert.Nil(t, c)
		assert.True(t, problems.HasErrors())
	})
	t.Run("karta.Validate", func(t *testing.T) {
		assert.True(t, karta.Validate(nil).HasErrors())
	})
	t.Run("(*karta.Checked)(nil).Expr", func(t *testing.T) {
		var c *karta.Checked
		assert.Nil(t, c.Expr(".spec"))
	})
	t.Run("argo.IsBatch", func(t *testing.T) {
		assert.False(t, argo.IsBatch(nil))
		assert.False(t, argo.IsBatch(&karta.Karta{}), "no root component")
	})
	t.Run("karmada.ExportCheck", func(t *testing.T) {
		assert.Empty(t, karmada.ExportCheck(nil))
	})
	t.Run("gangoutput.WatchedAsWorkload", func(t *testing.T) {
		assert.False(t, gangoutput.WatchedAsWorkload(nil))
	})
	t.Run("schemacheck.Check", func(t *testing.T) {
		assert.Empty(t, schemacheck.Check(nil, nil))
	})
}
