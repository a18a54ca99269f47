package events

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// RotateAhead is how many days after today Rotate makes sure a partition
// exists for, so that the log takes events for a week without a Rotate.
const RotateAhead = 7

// partitionPrefix begins the name of each day's partition of
// postroom_events: the prefix, then the day (YYYYMMDD, UTC); the
// partition of the events written before the table was partitioned ends
// with "_before" (every event before that day).
const partitionPrefix = "postroom_events_p"

// Rotate keeps the log's day partitions (schema version 5): it creates
// the partition of each day from now's (UTC) to RotateAhead days later
// that is missing, moving into it the rows the default partition holds
// for that day, and drops whole each day partition that ended more than
// Retention before now (and the default partition's rows that old). It
// returns the names of the partitions it dropped.
//
// Run it from the application's schedule, at least daily (hourly is
// plenty); calls from several instances are safe (each change is a
// transaction under the migration's advisory lock). Creating and
// dropping a partition locks the table for a moment (ACCESS EXCLUSIVE:
// writes and reads wait for it), once per day.
func (s *SQL) Rotate(ctx context.Context, now time.Time) ([]string, error) {
	today := now.UTC().Truncate(24 * time.Hour)
	have, err := s.partitions(ctx)
	if err != nil {
		return nil, fmt.Errorf("events: rotate: %w", err)
	}
	for d := range RotateAhead + 1 {
		day := today.AddDate(0, 0, d)
		name := partitionPrefix + day.Format("20060102")
		if _, ok := have[name]; ok {
			continue
		}
		if err := s.locked(ctx, func(tx pgx.Tx) error { return createDay(ctx, tx, name, day) }); err != nil {
			return nil, fmt.Errorf("events: rotate: create %s: %w", name, err)
		}
	}
	cutoff := now.Add(-s.opts.Retention)
	var dropped []string
	for name, end := range have {
		if end.After(cutoff) {
			continue
		}
		if err := s.locked(ctx, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `DROP TABLE IF EXISTS `+pgx.Identifier{name}.Sanitize())
			return err
		}); err != nil {
			return dropped, fmt.Errorf("events: rotate: drop %s: %w", name, err)
		}
		dropped = append(dropped, name)
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM postroom_events_default WHERE at < $1`, cutoff); err != nil {
		return dropped, fmt.Errorf("events: rotate: %w", err)
	}
	return dropped, nil
}

// partitions returns the day partitions of postroom_events by name, each
// with the end of the time it holds.
func (s *SQL) partitions(ctx context.Context) (map[string]time.Time, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'postroom_events'::regclass`)
	if err != nil {
		return nil, err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	out := make(map[string]time.Time, len(names))
	for _, n := range names {
		day, before := strings.CutSuffix(strings.TrimPrefix(n, partitionPrefix), "_before")
		t, err := time.Parse("20060102", day)
		if !strings.HasPrefix(n, partitionPrefix) || err != nil {
			continue // the default partition, or not one of Rotate's
		}
		if !before {
			t = t.AddDate(0, 0, 1)
		}
		out[n] = t
	}
	return out, nil
}

// locked runs f in a transaction under the advisory lock of MigrateSQL.
func (s *SQL) locked(ctx context.Context, f func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLockKey); err != nil {
			return err
		}
		return f(tx)
	})
}

// createDay creates the partition name of day, unless another instance
// did, with the rows the default partition holds for it: they are moved
// out first, since a day's partition cannot be attached while the
// default one holds rows of that day.
func createDay(ctx context.Context, tx pgx.Tx, name string, day time.Time) error {
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, name).Scan(&exists); err != nil || exists {
		return err
	}
	id := pgx.Identifier{name}.Sanitize()
	end := day.AddDate(0, 0, 1)
	for _, q := range []string{
		`CREATE TEMPORARY TABLE postroom_events_moving (LIKE postroom_events) ON COMMIT DROP`,
		`WITH m AS (DELETE FROM postroom_events_default WHERE at >= $1 AND at < $2 RETURNING *)
			INSERT INTO postroom_events_moving SELECT * FROM m`,
		`CREATE TABLE ` + id + ` PARTITION OF postroom_events FOR VALUES FROM ('` + day.Format(time.RFC3339) + `') TO ('` + end.Format(time.RFC3339) + `')`,
		`INSERT INTO postroom_events OVERRIDING SYSTEM VALUE SELECT * FROM postroom_events_moving`,
	} {
		var args []any
		if strings.Contains(q, "$1") {
			args = []any{day, end}
		}
		if _, err := tx.Exec(ctx, q, args...); err != nil {
			return err
		}
	}
	return nil
}
