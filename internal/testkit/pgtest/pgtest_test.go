package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// currentDatabase returns the name of the database db is connected to.
func currentDatabase(t *testing.T, db *sql.DB) string {
	t.Helper()
	var name string
	if err := db.QueryRowContext(t.Context(), "SELECT current_database()").Scan(&name); err != nil {
		t.Fatalf("current_database: %v", err)
	}
	return name
}

// databaseExists reports whether the server has a database called name.
func databaseExists(t *testing.T, name string) bool {
	t.Helper()
	admin, err := adminDSN()
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", admin)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatalf("pg_database: %v", err)
	}
	return n == 1
}

// openDB opens a *sql.DB on DSN(t)'s database, closed when t ends (before
// the database is dropped: registered after DSN's cleanup).
func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestNewDatabasesAreSeparate(t *testing.T) {
	a, b := openDB(t), openDB(t)
	if na, nb := currentDatabase(t, a), currentDatabase(t, b); na == nb {
		t.Fatalf("two DSN calls gave the same database %q", na)
	}
	if _, err := a.ExecContext(t.Context(), "CREATE TABLE only_in_a (x int)"); err != nil {
		t.Fatalf("create table: %v", err)
	}
	var n int
	err := b.QueryRowContext(t.Context(), "SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'").Scan(&n)
	if err != nil || n != 0 {
		t.Fatalf("database b sees %d tables named only_in_a (err %v); want 0", n, err)
	}
	err = a.QueryRowContext(t.Context(), "SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'").Scan(&n)
	if err != nil || n != 1 {
		t.Fatalf("database a sees %d tables named only_in_a (err %v); want 1", n, err)
	}
}

func TestDatabaseDroppedWhenTestEnds(t *testing.T) {
	var fromNew, fromDSN string
	var open *sql.DB
	t.Run("uses", func(t *testing.T) {
		fromNew = currentDatabase(t, openDB(t))

		// A connection still open when the test ends does not keep the
		// database alive.
		db, err := sql.Open("pgx", DSN(t))
		if err != nil {
			t.Fatal(err)
		}
		open = db
		fromDSN = currentDatabase(t, db)
		for _, name := range []string{fromNew, fromDSN} {
			if !databaseExists(t, name) {
				t.Fatalf("database %q does not exist during the test", name)
			}
		}
	})
	t.Cleanup(func() { open.Close() })
	for _, name := range []string{fromNew, fromDSN} {
		if databaseExists(t, name) {
			t.Errorf("database %q still exists after its test ended", name)
		}
	}
}

func TestWithDatabase(t *testing.T) {
	tests := []struct {
		name, dsn, want string
	}{
		{"url", "postgres://u:p%40ss@db.example:5433/postgres?sslmode=disable", "postgres://u:p%40ss@db.example:5433/pgtest_1?sslmode=disable"},
		{"url_no_path", "postgresql://u@db.example", "postgresql://u@db.example/pgtest_1"},
		{"keywords", "host=db.example dbname=postgres user=u", "host=db.example dbname=postgres user=u dbname=pgtest_1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := withDatabase(tt.dsn, "pgtest_1")
			if err != nil || got != tt.want {
				t.Fatalf("withDatabase(%q) = %q, %v; want %q", tt.dsn, got, err, tt.want)
			}
		})
	}
	t.Run("bad_url_hides_password", func(t *testing.T) {
		_, err := withDatabase("postgres://u:secret@db.example:port/x", "pgtest_1")
		if err == nil {
			t.Fatal("no error for a bad URL")
		}
		if strings.Contains(fmt.Sprint(err), "secret") {
			t.Errorf("error %q repeats the password", err)
		}
	})
}

// recorder is a testing.TB that records Skipf and Fatal, the calls
// unavailable makes, instead of ending the goroutine; its other methods
// are not to be called.
type recorder struct {
	testing.TB
	skipped, failed bool
}

func (r *recorder) Helper()      {}
func (r *recorder) Skip(...any)  { r.skipped = true }
func (r *recorder) Fatal(...any) { r.failed = true }

func TestUnavailable(t *testing.T) {
	tests := []struct {
		name, ci string
		err      error
		wantSkip bool
	}{
		{"not_installed_locally", "", errNotInstalled, true},
		{"not_installed_in_ci", "true", errNotInstalled, false},
		{"broken_locally", "", errors.New("initdb failed"), false},
		{"broken_in_ci", "true", errors.New("initdb failed"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CI", tt.ci)
			r := &recorder{}
			unavailable(r, tt.err)
			if r.skipped != tt.wantSkip || r.failed == tt.wantSkip {
				t.Errorf("unavailable(CI=%q, %v): skipped %v, failed %v; want skipped %v", tt.ci, tt.err, r.skipped, r.failed, tt.wantSkip)
			}
		})
	}
}

// TestTemplate: a Template's Setup runs once, however many tests ask for
// a copy at once, and each copy starts with what Setup made and is a
// database of its own.
func TestTemplate(t *testing.T) {
	var setups atomic.Int32
	tp := &Template{Setup: func(ctx context.Context, pool *pgxpool.Pool) error {
		setups.Add(1)
		_, err := pool.Exec(ctx, "CREATE TABLE made_once (x int); INSERT INTO made_once VALUES (1)")
		return err
	}}
	const copies = 4
	names := make([]string, copies)
	t.Run("copies", func(t *testing.T) {
		for i := range copies {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				pool := tp.NewPool(t)
				if err := pool.QueryRow(t.Context(), "SELECT current_database()").Scan(&names[i]); err != nil {
					t.Fatal(err)
				}
				// Each copy has the template's row, and its own insert only.
				if _, err := pool.Exec(t.Context(), "INSERT INTO made_once VALUES ($1)", 100+i); err != nil {
					t.Fatal(err)
				}
				var n, sum int
				if err := pool.QueryRow(t.Context(), "SELECT count(*), sum(x) FROM made_once").Scan(&n, &sum); err != nil {
					t.Fatal(err)
				}
				if n != 2 || sum != 101+i {
					t.Errorf("copy %d: %d rows summing to %d, want 2 summing to %d", i, n, sum, 101+i)
				}
			})
		}
	})
	if n := setups.Load(); n != 1 {
		t.Errorf("Setup ran %d times, want once", n)
	}
	for i, name := range names {
		if name == "" || databaseExists(t, name) {
			t.Errorf("copy %d: database %q still exists after its test ended", i, name)
		}
	}

	failing := &Template{Setup: func(context.Context, *pgxpool.Pool) error { return errors.New("no migrations today") }}
	r := &recorder{TB: t}
	if dsn := failing.DSN(r); !r.failed || dsn != "" {
		t.Error("a Template whose Setup fails gave a database")
	}
}
