package sqlschema

import (
	"context"

	"github.com/postroom/postroom/sqldb"
)

// Migrate runs Apply in a transaction of its own on db, so that
// instances starting together migrate one after the other and only one
// applies each version; it commits when Apply succeeds. On PostgreSQL the
// transaction first takes the transaction-scoped advisory lock lock; on
// SQLite the transaction holds the write lock from its start (sqlitedb
// begins IMMEDIATE). When ctx has ended, ctx's error is the one returned,
// whatever the driver made of the cancellation. A package whose
// migrations cannot share a transaction (the outbox, with River's) takes
// its lock itself.
func Migrate(ctx context.Context, db sqldb.DB, lock int64, table string, ms []Migration, want int) error {
	err := sqldb.BeginFunc(ctx, db, func(tx sqldb.Tx) error {
		if db.Engine() == sqldb.Postgres {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lock); err != nil {
				return err
			}
		}
		return Apply(ctx, tx, table, ms, want)
	})
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
