// Package apisurface holds the test that keeps karta's public API small:
// every exported identifier of a public package (one outside internal/ and
// not a command) must be used outside its package, be reachable from the
// declaration of one that is (a field's type, a parameter, a result), be an
// error an embedder branches on, be a value of such a type, or be listed in
// the test with the reason it is public. It has no code of its own.
package apisurface
