package sqlitedb_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/postroom/postroom/sqldb/sqlitedb"
)

func TestMain(m *testing.M) {
	if path := os.Getenv("SQLITEDB_TEST_OPEN"); path != "" {
		// The second process of TestOneProcess.
		_, err := sqlitedb.Open(context.Background(), path, sqlitedb.Options{})
		var inUse *sqlitedb.InUseError
		if errors.As(err, &inUse) {
			os.Exit(3)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// TestOneProcess: a file open in one process is refused to another with an
// *InUseError that says what to do, and to a second Open in the same
// process; after Close another may open it.
func TestOneProcess(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "postroom.db")
	db, err := sqlitedb.Open(ctx, path, sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `PRAGMA user_version = 7`); err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := db.QueryRow(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SQLITEDB_TEST_OPEN="+path)
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("another process's Open: %v; want it refused with an *InUseError (exit 3)", err)
	}

	_, err = sqlitedb.Open(ctx, path, sqlitedb.Options{})
	var inUse *sqlitedb.InUseError
	if !errors.As(err, &inUse) || inUse.Path != path {
		t.Errorf("a second Open in this process: %v; want an *InUseError for %s", err, path)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := sqlitedb.Open(ctx, path, sqlitedb.Options{})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	defer again.Close()
	var v int
	if err := again.QueryRow(ctx, `PRAGMA user_version`).Scan(&v); err != nil || v != 7 {
		t.Errorf("user_version after reopening = %d, %v; want 7", v, err)
	}
}
