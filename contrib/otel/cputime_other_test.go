//go:build !unix

package postroomotel_test

import "time"

// cpuTime is 0 where getrusage is missing: the benchmark's CPU figures
// are then 0 and its wall times are what it measures.
func cpuTime() time.Duration { return 0 }
