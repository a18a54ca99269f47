package sqldb_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/postroom/postroom/internal/testkit/dbtest"
	"github.com/postroom/postroom/sqldb"
)

// TestEngines runs the seam's contract on each engine: what a store relies
// on must hold on PostgreSQL and SQLite alike.
func TestEngines(t *testing.T) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			db := e.Open(t)
			ctx := context.Background()
			ddl := `CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL UNIQUE, at timestamptz, tags text)`
			if db.Engine() == sqldb.SQLite {
				ddl = `CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL UNIQUE, at integer, tags text)`
			}
			if _, err := db.Exec(ctx, ddl); err != nil {
				t.Fatal(err)
			}
			t.Run("times", func(t *testing.T) { testTimes(t, db) })
			t.Run("errors", func(t *testing.T) { testErrors(t, db) })
			t.Run("copy", func(t *testing.T) { testCopy(t, db) })
			t.Run("transactions", func(t *testing.T) { testTransactions(t, db) })
			t.Run("arrays", func(t *testing.T) { testArrays(t, db) })
		})
	}
}

var at = time.Date(2026, 12, 7, 10, 11, 12, 123456789, time.FixedZone("x", 3600))

func testTimes(t *testing.T, db sqldb.DB) {
	ctx := context.Background()
	if n, err := db.Exec(ctx, `INSERT INTO items (id, name, at) VALUES ($1, $2, $3), ($4, $5, NULL)`, 1, "one", at, 2, "two"); err != nil || n != 2 {
		t.Fatalf("Exec = %d, %v; want 2 rows", n, err)
	}
	var got time.Time
	var none *time.Time
	if err := db.QueryRow(ctx, `SELECT a.at, b.at FROM items a, items b WHERE a.id = $1 AND b.id = $2`, 1, 2).Scan(&got, &none); err != nil {
		t.Fatal(err)
	}
	if want := at.Truncate(time.Microsecond); !got.Equal(want) || none != nil {
		t.Errorf("times read back as %v and %v; want %v and nil", got, none, want)
	}
	var some *time.Time
	if err := db.QueryRow(ctx, `SELECT at FROM items WHERE at < $1`, at.Add(time.Second)).Scan(&some); err != nil || some == nil {
		t.Errorf("a comparison with a time argument: %v, %v", some, err)
	}
}

func testErrors(t *testing.T, db sqldb.DB) {
	ctx := context.Background()
	var s string
	if err := db.QueryRow(ctx, `SELECT name FROM items WHERE id = $1`, 999).Scan(&s); !errors.Is(err, sqldb.ErrNoRows) {
		t.Errorf("no row: %v; want ErrNoRows", err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO items (id, name) VALUES ($1, $2)`, 3, "one"); !errors.Is(err, sqldb.ErrUniqueViolation) {
		t.Errorf("a second row of a unique name: %v; want ErrUniqueViolation", err)
	}
}

func testCopy(t *testing.T, db sqldb.DB) {
	ctx := context.Background()
	var rows [][]any
	for i := range 1234 {
		rows = append(rows, []any{1000 + i, "copied-" + string(rune('a'+i%26)) + time.Duration(i).String(), at})
	}
	if n, err := db.CopyFrom(ctx, "items", []string{"id", "name", "at"}, rows); err != nil || n != 1234 {
		t.Fatalf("CopyFrom = %d, %v; want 1234", n, err)
	}
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM items WHERE id >= 1000`).Scan(&n); err != nil || n != 1234 {
		t.Errorf("count after CopyFrom = %d, %v", n, err)
	}
}

func testTransactions(t *testing.T, db sqldb.DB) {
	ctx := context.Background()
	boom := errors.New("boom")
	err := sqldb.BeginFunc(ctx, db, func(tx sqldb.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO items (id, name) VALUES ($1, $2)`, 10, "rolled back"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("BeginFunc = %v; want fn's error", err)
	}
	err = sqldb.BeginFunc(ctx, db, func(tx sqldb.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO items (id, name) VALUES ($1, $2)`, 11, "committed")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	rows, err := db.Query(ctx, `SELECT name FROM items WHERE id IN (10, 11) ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		names = append(names, s)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names, []string{"committed"}) {
		t.Errorf("rows after a rollback and a commit: %q", names)
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Errorf("Rollback after Commit = %v; want nil", err)
	}
}

func testArrays(t *testing.T, db sqldb.DB) {
	ctx := context.Background()
	names := []string{"one", "two", "nobody"}
	q := `SELECT count(*) FROM items WHERE name = ANY($1)`
	if db.Engine() == sqldb.SQLite {
		q = `SELECT count(*) FROM items WHERE name IN (SELECT value FROM json_each($1))`
	}
	var n int
	if err := db.QueryRow(ctx, q, names).Scan(&n); err != nil || n != 2 {
		t.Errorf("names matching a []string argument: %d, %v; want 2", n, err)
	}
	if _, err := db.Exec(ctx, `UPDATE items SET tags = $1 WHERE id = 1`, `["a","b"]`); err != nil {
		t.Fatal(err)
	}
	if db.Engine() == sqldb.SQLite {
		var tags []string
		if err := db.QueryRow(ctx, `SELECT tags FROM items WHERE id = 1`).Scan(&tags); err != nil || !slices.Equal(tags, []string{"a", "b"}) {
			t.Errorf("a *[]string read back from JSON text: %q, %v", tags, err)
		}
	}
}
