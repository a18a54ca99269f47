package dburl_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/postroom/postroom/internal/dburl"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb"
	"github.com/postroom/postroom/sqldb/sqlitedb"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Main(m)) }

// TestSQLite opens a file by each spelling of its URL: the file is made
// where the path says, holds what was written, and is taken for this
// process until closed.
func TestSQLite(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	ctx := context.Background()
	for _, tt := range []struct{ url, file string }{
		{"sqlite:postroom.db", filepath.Join(dir, "postroom.db")},
		{"sqlite://sub.db", filepath.Join(dir, "sub.db")},
		{"sqlite:" + filepath.Join(dir, "abs.db"), filepath.Join(dir, "abs.db")},
		{"sqlite://" + filepath.Join(dir, "abs2.db"), filepath.Join(dir, "abs2.db")},
	} {
		db, closeDB, err := dburl.Open(ctx, tt.url)
		if err != nil {
			t.Fatalf("Open(%q): %v", tt.url, err)
		}
		if db.Engine() != sqldb.SQLite {
			t.Errorf("Open(%q): engine %s", tt.url, db.Engine())
		}
		if _, err := db.Exec(ctx, `CREATE TABLE t (x integer)`); err != nil {
			t.Fatal(err)
		}
		// A second opener of the file (here the same process, refused as
		// another would be) is told to use PostgreSQL.
		_, _, err = dburl.Open(ctx, tt.url)
		var inUse *sqlitedb.InUseError
		if !errors.As(err, &inUse) || !strings.Contains(err.Error(), "PostgreSQL") {
			t.Errorf("second Open(%q): %v; want an InUseError naming PostgreSQL", tt.url, err)
		}
		if err := closeDB(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(tt.file); err != nil {
			t.Errorf("Open(%q): %v", tt.url, err)
		}
		db, closeDB, err = dburl.Open(ctx, tt.url)
		if err != nil {
			t.Fatalf("Open(%q) again: %v", tt.url, err)
		}
		var n int
		if err := db.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil {
			t.Errorf("the table made before, read again: %v", err)
		}
		if err := closeDB(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPostgres opens a PostgreSQL database by its URL.
func TestPostgres(t *testing.T) {
	ctx := context.Background()
	db, closeDB, err := dburl.Open(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer closeDB()
	if db.Engine() != sqldb.Postgres {
		t.Errorf("engine %s", db.Engine())
	}
	var one int
	if err := db.QueryRow(ctx, `SELECT 1`).Scan(&one); err != nil || one != 1 {
		t.Errorf("SELECT 1: %d, %v", one, err)
	}
}

// TestRefused: a URL of neither engine is refused naming both forms,
// without repeating the URL (it may hold a password); a sqlite: URL
// without a path, or with a query, is refused.
func TestRefused(t *testing.T) {
	ctx := context.Background()
	for _, url := range []string{"", "mysql://root:hunter2@db/app", "postroom.db", "file:postroom.db"} {
		_, _, err := dburl.Open(ctx, url)
		if !errors.Is(err, dburl.ErrUnknown) || !strings.Contains(err.Error(), "postgres://") || !strings.Contains(err.Error(), "sqlite:") {
			t.Errorf("Open(%q): %v; want ErrUnknown naming both forms", url, err)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Open(%q): %v shows the password", url, err)
		}
	}
	for _, url := range []string{"sqlite:", "sqlite://", "sqlite:x.db?mode=ro"} {
		if _, _, err := dburl.Open(ctx, url); err == nil {
			t.Errorf("Open(%q): no error", url)
		}
	}
	for url, want := range map[string]sqldb.Engine{
		"postgresql://app@db/app":     sqldb.Postgres,
		"host=db dbname=app":          sqldb.Postgres,
		"sqlite:/var/lib/postroom.db": sqldb.SQLite,
	} {
		if got, err := dburl.Engine(url); got != want || err != nil {
			t.Errorf("Engine(%q) = %s, %v; want %s", url, got, err, want)
		}
	}
}
