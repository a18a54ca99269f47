//go:build !unix

package transport_test

import "time"

// processCPU returns false: this system's CPU time is not read here.
func processCPU() (time.Duration, bool) { return 0, false }
