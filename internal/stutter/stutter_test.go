package stutter

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFind(t *testing.T) {
	for msg, want := range map[string]string{
		`karta "x": ReviseReplica: karta "x": ReviseReplica is not defined: no replicasPath`: `karta "x"`,
		`karta "x": ReviseReplica: ReviseReplica is not defined: no replicasPath`:            "ReviseReplica",
		`karta "x": GetPodSpecs: component "w": component "w": replicasPath: jq error`:       `component "w"`,
		`f.yaml: f.yaml: no object found`:                                                    "f.yaml",
		`karta "x": ReviseReplica is not defined: no replicasPath`:                           "",
		`karta "x": AggregateStatus: statusItems[0] (cluster "a"): InterpretStatus: boom`:    "",
		`karta "x": GetPodSpecs: component "w": replicasPath: jq ".spec.n": not a number`:    "",
		`f.yaml:3: document 2: spec.a: unknown field "b"`:                                    "",
		`customization "c": InterpretHealth: script:health.lua:3: boom`:                      "",
	} {
		assert.Equal(t, want, Find(msg), msg)
	}
}
