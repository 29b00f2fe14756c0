package jqexpr

import "strings"

// bannedFuncs are the functions rejected at any arity, by family (see the
// package documentation for the reasons).
var bannedFuncs = map[string]bool{
	// Mutation.
	"del": true, "setpath": true, "delpaths": true,
	// Unbounded or document-sized work.
	"paths": true, "leaf_paths": true, "recurse": true, "recurse_down": true,
	"walk": true, "repeat": true, "range": true, "until": true, "while": true,
	"limit": true, "tostream": true, "combinations": true,
	// Environment access and side effects.
	"input": true, "inputs": true, "env": true, "input_filename": true,
	"halt": true, "halt_error": true, "debug": true, "stderr": true,
	// Nondeterminism.
	"now": true,
}

// bannedVars are the variables rejected wherever they are read.
var bannedVars = map[string]bool{"$ENV": true}

// isInternal reports whether name looks like one of gojq's internal helpers
// (_range, _modify, ...), which gojq lets queries call.
func isInternal(name string) bool { return strings.HasPrefix(name, "_") }
