//go:build race

package webhook

// raceEnabled: the race detector slows every goroutine several times and
// unevenly, so latency ratios get a wider bound.
const raceEnabled = true
