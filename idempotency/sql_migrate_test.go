package idempotency

import (
	"io/fs"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/dbtest"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

// TestMigrateUnversioned: a PostgreSQL database whose tables an earlier
// release made (its Schema, applied at every start, with no version
// table), holding a call's record, is brought to SchemaVersion by Migrate
// and keeps the record: a retry of that call replays it.
func TestMigrateUnversioned(t *testing.T) {
	ctx := t.Context()
	pool := pgtest.NewPool(t)
	old, err := fs.ReadFile(schema, "sql/postgres/001_idempotency.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, string(old)); err != nil {
		t.Fatal(err)
	}
	call := newCall("a@example.org")
	h, err := HashCall(postroom.OpSend, call)
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := pool.QueryRow(ctx, `INSERT INTO postroom_idempotency_calls (account_id, idempotency_key, request_hash, started_at)
		VALUES ('acct', 'k1', $1, now()) RETURNING id`, h[:]).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO postroom_idempotency_recipients (call_id, idx, send_id, status) VALUES ($1, 0, 'id-1', 'sent')`, id); err != nil {
		t.Fatal(err)
	}

	db := pgxdb.New(pool)
	for range 2 { // the second finds the database up to date
		if err := Migrate(ctx, db); err != nil {
			t.Fatal(err)
		}
	}
	var version int
	if err := pool.QueryRow(ctx, `SELECT max(version) FROM postroom_idempotency_schema`).Scan(&version); err != nil || version != SchemaVersion {
		t.Fatalf("schema version %d, %v; want %d", version, err, SchemaVersion)
	}
	s, err := NewSQL(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr := newRelay()
	res, err := Run(ctx, s, newMailer(t, tr, 0), "k1", postroom.OpSend, call)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Status != postroom.StatusSent || res[0].SendID != "id-1" || tr.total() != 0 {
		t.Errorf("retry after Migrate: %+v, %d sent; want the recorded result, nothing sent", res, tr.total())
	}
}

// TestMigrateTwice: on each engine, Migrate on a fresh database makes the
// schema at SchemaVersion, and again does nothing.
func TestMigrateTwice(t *testing.T) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			db := e.Open(t)
			for range 2 {
				if err := Migrate(t.Context(), db); err != nil {
					t.Fatal(err)
				}
			}
			var n, version int
			if err := db.QueryRow(t.Context(), `SELECT count(*), max(version) FROM postroom_idempotency_schema`).Scan(&n, &version); err != nil || n != 1 || version != SchemaVersion {
				t.Errorf("version table: %d rows, version %d, %v; want one row of %d", n, version, err, SchemaVersion)
			}
		})
	}
}
