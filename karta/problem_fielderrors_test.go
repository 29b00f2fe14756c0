package karta

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestProblemsAsFieldErrorList(t *testing.T) {
	k := &Karta{}
	k.Name = "broken"
	k.Spec.StructureDefinition.RootComponent = &Component{Name: "root"}
	ps := Validate(k)
	require.True(t, ps.HasErrors())

	list := ps.ErrorList()
	require.Len(t, list, len(ps.Errors()), "one field error per error, warnings left out")
	for i, p := range ps.Errors() {
		assert.Equal(t, field.ErrorTypeInvalid, list[i].Type)
		assert.Equal(t, p.Field, list[i].Field)
		assert.Equal(t, p.Message, list[i].Detail)
		// The API server's rendering: "FIELD: Invalid value: DETAIL" with
		// the value omitted.
		assert.Equal(t, p.Field+": Invalid value: "+p.Message, list[i].Error())
	}

	var ve *ValidationError
	require.True(t, errors.As(ps.ErrFor("broken"), &ve))
	assert.Equal(t, list, ve.ErrorList())

	// It goes into the API's Invalid status as it is.
	st := apierrors.NewInvalid(schema.GroupKind{Group: Group, Kind: KindKarta}, "broken", ve.ErrorList())
	assert.Len(t, st.ErrStatus.Details.Causes, len(list))
	assert.True(t, apierrors.IsInvalid(st))

	assert.Empty(t, Problems{{Severity: SeverityWarning, Field: "spec", Message: "w"}}.ErrorList())
}
