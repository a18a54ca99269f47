//go:build unix

package bounce

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) the process has used:
// on a shared machine, messages per CPU second is what one core does,
// whatever else runs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
