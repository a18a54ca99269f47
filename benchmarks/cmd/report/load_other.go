//go:build !linux

package main

// loadAverage returns "?" where /proc/loadavg does not exist.
func loadAverage() string { return "?" }
