//go:build !unix

package isolation

import (
	"errors"
	"time"
)

// limitSelf fails: the worker's limits are Unix resource limits.
func limitSelf(mem, cpu int64) error {
	if mem > 0 || cpu > 0 {
		return errors.New("worker limits need a Unix system (setrlimit)")
	}
	return nil
}

func cpuUsed() time.Duration { return 0 }
