// Package workload generates, locates and reads the benchmark workload, the
// message.send call body that postroom's tests and benchmarks use as their
// common input. The workload is part of the repository, at
// testdata/workload/transactional.json from the repository root (FromRoot).
// Generate makes it: it is rewritten with
//
//	go generate ./internal/testkit/workload
//
// (or go run ./internal/testkit/workload/gen), and a test checks that the committed
// file is Generate's output byte for byte. A call of N recipients is made
// from its Samples sample recipients: recipient i takes the name and params
// of sample i mod Samples and the address Address(i).
//
// The package imports nothing from the module, so that every package of it,
// the root's internal tests included, can use it. It does not decode the
// workload: callers unmarshal Read's bytes into what they need, or use the
// internal/testkit/fixture package's Workload for whole calls.
//
// Every function here is safe for concurrent use.
//
// Only tests, benchmarks, internal/testkit/fixture and the commands that write or
// report on the workload import it; the postroom package never does.
package workload

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Module is the module whose repository holds the workload: Root looks for
// the go.mod that declares it.
const Module = "github.com/postroom/postroom"

// FromRoot is the workload's path relative to the repository root,
// slash-separated.
const FromRoot = "testdata/workload/transactional.json"

// ErrNoRoot is returned, wrapped, by Root, PathFrom and Path when no
// directory at or above the starting one has a go.mod declaring Module.
var ErrNoRoot = errors.New("workload: no go.mod of " + Module + " at or above the directory")

// Root returns the repository root at or above dir: the first directory,
// dir itself included, whose go.mod declares Module. The result is
// absolute. It fails with ErrNoRoot when there is none.
func Root(dir string) (string, error) {
	start, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("workload: %w", err)
	}
	dir = start
	for {
		if modulePath(filepath.Join(dir, "go.mod")) == Module {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w %s", ErrNoRoot, start)
		}
		dir = parent
	}
}

// PathFrom returns the workload's path as found from dir: Root(dir) joined
// with FromRoot. The file itself is not opened.
func PathFrom(dir string) (string, error) {
	root, err := Root(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, filepath.FromSlash(FromRoot)), nil
}

// Path returns the workload's path as found from the current directory,
// which for a test is its package's directory. The file itself is not
// opened.
func Path() (string, error) {
	return PathFrom(".")
}

// Read returns the workload's bytes, as found by Path. It fails tb, with a
// message saying where the workload was looked for, when the repository
// root or the file cannot be found or read. The bytes are new and owned by
// the caller.
func Read(tb testing.TB) []byte {
	tb.Helper()
	path, err := Path()
	if err != nil {
		tb.Fatalf("locating the workload (%s in the repository): %v", FromRoot, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("reading the workload (%s in the repository): %v", FromRoot, err)
	}
	return data
}

// Address returns the address of recipient i of a call made from the
// workload: user%06d@example.org formatted with i.
func Address(i int) string {
	return fmt.Sprintf("user%06d@example.org", i)
}

// modulePath is the module line of a go.mod file, or "" when the file
// cannot be read or has none.
func modulePath(gomod string) string {
	f, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
