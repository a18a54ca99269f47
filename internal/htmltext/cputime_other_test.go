//go:build !unix

package htmltext_test

import "time"

// processCPU reports false: the system does not tell.
func processCPU() (time.Duration, bool) { return 0, false }
