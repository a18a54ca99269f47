package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestQuickstart runs the example as `go run ./examples/quickstart` does
// and checks that it wrote one message per recipient.
func TestQuickstart(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where run makes its outbox
	if err := run(t.Context()); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(tmp, "postroom-quickstart-*", "*.eml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Fatalf("the example wrote %d messages, %q; want 3", len(files), files)
	}
	for _, f := range files {
		if fi, err := os.Stat(f); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v, want a message", f, err)
		}
	}
}
