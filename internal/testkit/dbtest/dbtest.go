// Package dbtest gives a store's tests a database of each engine behind
// the sqldb seam, so that one contract suite runs on all of them:
//
//	for _, e := range dbtest.Engines() {
//		t.Run(e.Name, func(t *testing.T) {
//			db := e.Open(t) // a fresh, empty database
//			...
//		})
//	}
//
// PostgreSQL's databases come from internal/testkit/pgtest (its Main must wrap the
// package's TestMain; without a server the PostgreSQL subtests skip, or
// fail under CI=true, as pgtest's do). SQLite's are files in the test's
// temporary folder, opened with sqlitedb.Open and closed when the test
// ends.
package dbtest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/sqldb/sqlitedb"
)

// Engine opens fresh databases of one engine for tests.
type Engine struct {
	// Name is the engine's name, for t.Run: "postgres" or "sqlite".
	Name string
	// Open returns a fresh, empty database, gone when t ends.
	Open func(t testing.TB) sqldb.DB
}

// Engines returns PostgreSQL's and SQLite's.
func Engines() []Engine {
	return []Engine{{"postgres", Postgres}, {"sqlite", SQLite}}
}

// Postgres returns a fresh PostgreSQL database (pgtest.NewPool).
func Postgres(t testing.TB) sqldb.DB { return pgxdb.New(pgtest.NewPool(t)) }

// SQLite returns a fresh SQLite database in a file of t.TempDir().
func SQLite(t testing.TB) sqldb.DB { return SQLiteAt(t, filepath.Join(t.TempDir(), "postroom.db")) }

// SQLiteAt opens the SQLite database at path and closes it when t ends.
func SQLiteAt(t testing.TB, path string) *sqlitedb.DB {
	t.Helper()
	db, err := sqlitedb.Open(context.Background(), path, sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return db
}
