//go:build !unix

package bounce

import "time"

// cpuTime is not measured here: BenchmarkParse reports no msgs/cpu-s.
func cpuTime() time.Duration { return 0 }
