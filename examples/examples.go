// Package examples holds the YAML files of the example folders (a
// built-in's states, its pods and revisions; examples/NAME/*.yaml),
// embedded, for a program that offers them to a person: karta studio's
// built-in picker. Which file is a state is internal/exampledir's to say.
package examples

import "embed"

// Files are the example folders' YAML files, as NAME/FILE.yaml.
//
//go:embed */*.yaml
var Files embed.FS
