// Package testenv decides what a test does when a real part it needs (a
// program, a package, a database server) is missing: it skips, naming the
// command that installs the part, or, when the environment variable CI is
// "true", fails, since CI installs every part and a skip there would hide
// a test that never runs.
//
// It is for the module's tests and test helpers only.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Missing reports that a part tb needs is missing: what says what is
// missing (and why it was found so), install how to install it. It skips
// tb, or fails it under CI=true.
func Missing(tb testing.TB, what, install string) {
	tb.Helper()
	msg := what + ": " + install
	if CI() {
		tb.Fatal(msg + " (required under CI=true)")
	} else {
		tb.Skip(msg)
	}
}

// Need checks that the Debian package pkg is installed by running check,
// a command line that succeeds only when it is ("spamassassin", "-V"); when
// it fails, Missing skips tb (or fails it under CI=true) naming
// "apt-get install pkg".
func Need(tb testing.TB, pkg string, check ...string) {
	tb.Helper()
	if len(check) == 0 {
		tb.Fatalf("testenv: Need(%q) without a command to check it", pkg)
	}
	if err := exec.Command(check[0], check[1:]...).Run(); err != nil {
		Missing(tb, fmt.Sprintf("%s is not installed (%s: %v)", pkg, strings.Join(check, " "), err), "apt-get install "+pkg)
	}
}

// CI reports whether the tests run under CI: the environment variable CI
// is "true".
func CI() bool { return os.Getenv("CI") == "true" }
