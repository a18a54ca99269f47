package main

import (
	"os"
	"strings"
)

// loadAverage returns the one-minute load average from /proc/loadavg, or
// "?": the compile path's table is measured on one core, and its wall
// times grow with the other work on the machine.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}
