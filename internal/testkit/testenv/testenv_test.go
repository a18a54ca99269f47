package testenv

import (
	"flag"
	"strconv"
	"testing"
)

// recorder is a testing.TB that records a skip or a failure instead of
// ending the test.
type recorder struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (r *recorder) Helper()               {}
func (r *recorder) Skip(args ...any)      { r.skipped, r.msg = true, args[0].(string) }
func (r *recorder) Fatal(args ...any)     { r.failed, r.msg = true, args[0].(string) }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }

func TestMissing(t *testing.T) {
	for _, tt := range []struct {
		ci       string
		wantSkip bool
	}{{"", true}, {"false", true}, {"true", false}} {
		t.Run("CI="+tt.ci, func(t *testing.T) {
			t.Setenv("CI", tt.ci)
			r := &recorder{TB: t}
			Missing(r, "x is not installed", "apt-get install x")
			if r.skipped != tt.wantSkip || r.failed == tt.wantSkip {
				t.Errorf("skipped %v, failed %v; want skipped %v", r.skipped, r.failed, tt.wantSkip)
			}
		})
	}
}

func TestNeed(t *testing.T) {
	t.Setenv("CI", "")
	r := &recorder{TB: t}
	Need(r, "testenv-no-such-package", "/nonexistent/testenv-check")
	if !r.skipped || r.msg == "" {
		t.Errorf("a missing program: skipped %v (%q)", r.skipped, r.msg)
	}
	r = &recorder{TB: t}
	Need(r, "go", "go", "version")
	if r.skipped || r.failed {
		t.Errorf("go is installed, yet skipped %v, failed %v: %s", r.skipped, r.failed, r.msg)
	}
}

// TestParallel: Parallel sets -test.parallel when the command line does
// not, and leaves the command line's value alone.
func TestParallel(t *testing.T) {
	f := flag.Lookup(parallelFlag)
	if f == nil {
		t.Fatalf("no flag %s", parallelFlag)
	}
	old := f.Value.String()
	t.Cleanup(func() { flag.Set(parallelFlag, old) })
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == parallelFlag })
	n, err := strconv.Atoi(old)
	if err != nil {
		t.Fatal(err)
	}
	Parallel(n + 3)
	want := strconv.Itoa(n + 3)
	if given {
		want = old
	}
	if got := f.Value.String(); got != want {
		t.Errorf("-test.parallel %s after Parallel(%d), want %s (given on the command line: %v)", got, n+3, want, given)
	}
}
