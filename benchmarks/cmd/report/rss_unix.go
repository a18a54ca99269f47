//go:build unix

package main

import (
	"errors"
	"os"
	"runtime"
	"syscall"
)

// maxRSS returns the maximum resident set size, in bytes, of an exited
// child process.
func maxRSS(ps *os.ProcessState) (int64, error) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, errors.New("no resource usage for the child process")
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return ru.Maxrss, nil // bytes there
	}
	return ru.Maxrss * 1024, nil // kilobytes on Linux and the BSDs
}
