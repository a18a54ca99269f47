package sqlschema

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Migrate runs Apply in a transaction of its own on pool, under the
// transaction-scoped advisory lock lock, so that instances starting
// together migrate one after the other and only one applies each
// version; it commits when Apply succeeds. When ctx has ended, ctx's
// error is the one returned, whatever the driver made of the
// cancellation. A package whose migrations cannot share a transaction
// (the outbox, with River's) takes its lock itself.
func Migrate(ctx context.Context, pool *pgxpool.Pool, lock int64, table string, ms []Migration, want int) error {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lock); err != nil {
			return err
		}
		return Apply(ctx, tx, table, ms, want)
	})
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
