// Package scripts holds the Lua overrides bundled with the built-in
// Kartas: where a generated hook cannot express an operator's logic, the
// built-in uses the same override mechanism users have (a --script file),
// and the file says why. scripts/overrides/NAME.lua belongs to the
// built-in NAME. Beside them, scripts/karmada and scripts/argocd hold the
// built-ins exported for Karmada and Argo CD (make generate); those are
// for users of those systems and are not built into karta.
package scripts

import (
	"embed"
	"errors"
	"io/fs"
)

// files is the overrides folder (a pattern naming *.lua alone would fail
// the build while no built-in needs a script); only NAME.lua is read.
//
//go:embed overrides
var files embed.FS

// For returns the bundled override of a built-in, if it has one:
// overrides/NAME.lua.
func For(name string) (source string, ok bool, err error) {
	b, err := files.ReadFile("overrides/" + name + ".lua")
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return string(b), true, nil
}
