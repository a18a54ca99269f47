package events

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/postroom/postroom/sqldb"
)

// RotateAhead is how many days after today Rotate makes sure a partition
// exists for (PostgreSQL), so that the log takes events for a week
// without a Rotate.
const RotateAhead = 7

// rotateBatch is how many rows each DELETE of Rotate removes on SQLite,
// so that the write lock is never held long.
const rotateBatch = 5000

// partitionPrefix begins the name of each day's partition of
// postroom_events: the prefix, then the day (YYYYMMDD, UTC); the
// partition of the events written before the table was partitioned ends
// with "_before" (every event before that day).
const partitionPrefix = "postroom_events_p"

// Rotate applies the retention: it deletes the message bodies older than
// KeepBodies before now (all of them when KeepBodies is off), in batches
// of a few thousand, removes the events older than Retention before now,
// and returns the names of the partitions it
// dropped (none on SQLite).
//
// On PostgreSQL (schema version 5) it keeps the log's day partitions: it
// creates the partition of each day from now's (UTC) to RotateAhead days
// later that is missing, moving into it the rows the default partition
// holds for that day, and drops whole each day partition that ended more
// than Retention before now (and deletes the default partition's rows
// that old): no row-by-row DELETE, no bloat. Creating and dropping a
// partition locks the table for a moment (ACCESS EXCLUSIVE: writes and
// reads wait for it), once per day. On SQLite, whose table is not
// partitioned, it deletes the old rows in batches of a few thousand, each
// its own transaction.
//
// Run it from the application's schedule, at least daily (hourly is
// plenty); calls from several instances are safe (on PostgreSQL each
// change is a transaction under the migration's advisory lock).
func (s *SQL) Rotate(ctx context.Context, now time.Time) ([]string, error) {
	if err := s.rotateBodies(ctx, now); err != nil {
		return nil, err
	}
	cutoff := now.Add(-s.opts.Retention)
	if s.db.Engine() == sqldb.SQLite {
		for {
			n, err := s.db.Exec(ctx, `DELETE FROM postroom_events WHERE id IN (
				SELECT id FROM postroom_events WHERE at < $1 ORDER BY at LIMIT $2)`, cutoff, rotateBatch)
			if err != nil {
				return nil, fmt.Errorf("events: rotate: %w", err)
			}
			if n < rotateBatch {
				return nil, nil
			}
		}
	}
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
		if err := s.locked(ctx, func(tx sqldb.Tx) error { return createDay(ctx, tx, name, day) }); err != nil {
			return nil, fmt.Errorf("events: rotate: create %s: %w", name, err)
		}
	}
	var dropped []string
	for name, end := range have {
		if end.After(cutoff) {
			continue
		}
		if err := s.locked(ctx, func(tx sqldb.Tx) error {
			_, err := tx.Exec(ctx, `DROP TABLE IF EXISTS `+name) // a name of partitions': [a-z_0-9]
			return err
		}); err != nil {
			return dropped, fmt.Errorf("events: rotate: drop %s: %w", name, err)
		}
		dropped = append(dropped, name)
	}
	if _, err := s.db.Exec(ctx, `DELETE FROM postroom_events_default WHERE at < $1`, cutoff); err != nil {
		return dropped, fmt.Errorf("events: rotate: %w", err)
	}
	return dropped, nil
}

// partitions returns the day partitions of postroom_events by name, each
// with the end of the time it holds.
func (s *SQL) partitions(ctx context.Context) (map[string]time.Time, error) {
	rows, err := s.db.Query(ctx, `
		SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'postroom_events'::regclass`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
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
	return out, rows.Err()
}

// locked runs f in a transaction under the advisory lock of Migrate
// (PostgreSQL).
func (s *SQL) locked(ctx context.Context, f func(sqldb.Tx) error) error {
	return sqldb.BeginFunc(ctx, s.db, func(tx sqldb.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLockKey); err != nil {
			return err
		}
		return f(tx)
	})
}

// createDay creates the partition name of day, unless another instance
// did, with the rows the default partition holds for it: they are moved
// out first, since a day's partition cannot be made while the default one
// holds rows of that day.
func createDay(ctx context.Context, tx sqldb.Tx, name string, day time.Time) error {
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, name).Scan(&exists); err != nil || exists {
		return err
	}
	end := day.AddDate(0, 0, 1)
	for _, q := range []string{
		`CREATE TEMPORARY TABLE postroom_events_moving (LIKE postroom_events) ON COMMIT DROP`,
		`WITH m AS (DELETE FROM postroom_events_default WHERE at >= $1 AND at < $2 RETURNING *)
			INSERT INTO postroom_events_moving SELECT * FROM m`,
		`CREATE TABLE ` + name + ` PARTITION OF postroom_events FOR VALUES FROM ('` + day.Format(time.RFC3339) + `') TO ('` + end.Format(time.RFC3339) + `')`,
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
