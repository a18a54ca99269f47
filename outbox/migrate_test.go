package outbox

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom/internal/pgtest"
	"github.com/postroom/postroom/internal/sqlschema"
)

// TestMigrateFromVersion1 upgrades a database at schema version 1 that
// holds a call's rows: Migrate brings it to SchemaVersion, keeps the
// rows, and the recipients' rows no longer have a foreign key to their
// call (sql/002_recipients_lighter.sql).
func TestMigrateFromVersion1(t *testing.T) {
	ctx := t.Context()
	pool, err := pgxpool.New(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		return sqlschema.Apply(ctx, tx, "postroom_outbox_schema", ms[:1], 1)
	}); err != nil {
		t.Fatal(err)
	}
	fks := func() (n int) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_constraint
			WHERE conrelid = 'postroom_outbox_recipients'::regclass AND contype = 'f'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if fks() != 1 {
		t.Fatal("version 1 has no foreign key on the recipients' rows")
	}
	for _, q := range []string{
		`INSERT INTO postroom_outbox_calls VALUES ('c', 'a', NULL, '\x00', 0, '{}', 2, now())`,
		`INSERT INTO postroom_outbox_chunks (call_id, first, count, recipients) VALUES ('c', 0, 2, '[]')`,
		`INSERT INTO postroom_outbox_recipients (call_id, idx, email, status) VALUES ('c', 0, 'a@example.org', 'sent')`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	var version, rows int
	if err := pool.QueryRow(ctx, `SELECT max(version) FROM postroom_outbox_schema`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM postroom_outbox_recipients WHERE call_id = 'c' AND status = 'sent'`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if version != SchemaVersion || rows != 1 || fks() != 0 {
		t.Errorf("after Migrate: version %d, %d rows, %d foreign keys; want %d, 1, 0", version, rows, fks(), SchemaVersion)
	}
	if err := Migrate(ctx, pool); err != nil { // again: nothing to do
		t.Fatal(err)
	}
}
