package option_test

import (
	"errors"
	"io/fs"
	"math"
	"testing"
	"time"

	"github.com/postroom/postroom/option"
)

func TestDefault(t *testing.T) {
	n := 0
	if err := option.Default("p.New", "Options.N", &n, 7); err != nil || n != 7 {
		t.Fatalf("zero: %d, %v; want 7, nil", n, err)
	}
	n = 3
	if err := option.Default("p.New", "Options.N", &n, 7); err != nil || n != 3 {
		t.Fatalf("set: %d, %v; want 3, nil", n, err)
	}
	n = -2
	err := option.Default("p.New", "Options.N", &n, 7)
	var oe *option.Error
	if !errors.As(err, &oe) || oe.Op != "p.New" || oe.Field != "Options.N" || n != -2 {
		t.Fatalf("negative: %d, %v; want an *Error for Options.N and n kept", n, err)
	}
	if got, want := err.Error(), "p.New: Options.N is negative (-2)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	d := time.Duration(0)
	if err := option.Default("p.New", "Options.D", &d, time.Second); err != nil || d != time.Second {
		t.Fatalf("duration: %v, %v", d, err)
	}
	f := math.NaN()
	if err := option.Default("p.New", "Options.F", &f, 1); !errors.As(err, &oe) || oe.Field != "Options.F" {
		t.Fatalf("NaN: %v; want an *Error", err)
	}
}

func TestDefaultOrOff(t *testing.T) {
	for _, tt := range []struct{ in, want int }{{0, 9}, {-5, -1}, {4, 4}} {
		n := tt.in
		if err := option.DefaultOrOff("p.New", "Options.N", &n, 9); err != nil || n != tt.want {
			t.Errorf("DefaultOrOff(%d) = %d, %v; want %d, nil", tt.in, n, err, tt.want)
		}
	}
	f := math.NaN()
	var oe *option.Error
	if err := option.DefaultOrOff("p.New", "Options.F", &f, 1); !errors.As(err, &oe) {
		t.Fatalf("NaN: %v; want an *Error", err)
	}
}

func TestErrorUnwrap(t *testing.T) {
	err := error(&option.Error{Op: "p.New", Field: "Options.Root", Reason: "cannot be read", Err: fs.ErrNotExist})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("errors.Is(%v, fs.ErrNotExist) = false", err)
	}
	if got, want := err.Error(), "p.New: Options.Root cannot be read: file does not exist"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	err = option.Errorf("p.New", "Options.Keys", "has %d keys", 0)
	var oe *option.Error
	if !errors.As(err, &oe) || oe.Reason != "has 0 keys" || oe.Err != nil {
		t.Fatalf("Errorf = %#v", err)
	}
}

func TestLogger(t *testing.T) {
	l := option.Logger(nil)
	if l == nil || l.Enabled(t.Context(), 12) {
		t.Fatalf("Logger(nil) = %v; want a logger enabled for nothing", l)
	}
	if got := option.Logger(l); got != l {
		t.Errorf("Logger(l) is not l")
	}
}
