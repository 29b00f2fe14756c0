package karta

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ErrorList returns the errors among ps as apimachinery's field.ErrorList,
// the form the API server's validation returns, so a caller can hand them
// to apierrors.NewInvalid or aggregate them with its own: each one is
// field.ErrorTypeInvalid at the problem's field path, with the message as
// its detail and no value (a Karta problem names an expression or a
// structure, not one bad value). Warnings are left out, as Err does.
func (ps Problems) ErrorList() field.ErrorList {
	var out field.ErrorList
	for _, p := range ps.Errors() {
		out = append(out, &field.Error{Type: field.ErrorTypeInvalid, Field: p.Field, BadValue: field.OmitValueType{}, Detail: p.Message})
	}
	return out
}

// ErrorList is the failed validation's problems as a field.ErrorList.
func (e *ValidationError) ErrorList() field.ErrorList { return e.Problems.ErrorList() }
