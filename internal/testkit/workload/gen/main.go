// Command gen writes the benchmark workload, the output of
// workload.Generate, at testdata/workload/transactional.json in the
// repository (or at the path given with -o). Run it from anywhere inside
// the repository:
//
//	go run ./internal/testkit/workload/gen
//
// or through go generate:
//
//	go generate ./internal/testkit/workload
//
// The output is the same on every run; commit it.
//
// From the module it imports only internal/testkit/workload; nothing imports it.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/postroom/postroom/internal/testkit/workload"
)

func main() {
	out := flag.String("o", "", "write the workload to `file` (default: "+workload.FromRoot+" in the repository)")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintf(os.Stderr, "gen: %v\n", err)
		os.Exit(1)
	}
}

func run(path string) error {
	if path == "" {
		var err error
		if path, err = workload.Path(); err != nil {
			return err
		}
	}
	b, err := workload.Generate()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
