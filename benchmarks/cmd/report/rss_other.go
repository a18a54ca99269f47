//go:build !unix

package main

import (
	"errors"
	"os"
)

// maxRSS is not measured on this system.
func maxRSS(*os.ProcessState) (int64, error) {
	return 0, errors.New("max RSS is measured on Unix systems only")
}
