package idempotency

import "github.com/postroom/postroom/sqldb"

// queries are the statements of SQL that differ between the engines.
type queries struct {
	// claim inserts the key's record, or bumps its epoch, and returns its
	// id, epoch, hash and start, and whether it inserted it.
	claim string
	// handOver and finish write a recipient ($3...) of record $1 if its
	// epoch is still $2.
	handOver, finish string
	// deleteExpired deletes up to $2 records started before $1.
	deleteExpired string
}

// The statements of both engines, the same but where noted.
const (
	claimInsert = `
INSERT INTO postroom_idempotency_calls (account_id, idempotency_key, request_hash, started_at)
VALUES ($1, $2, $3, $4)
ON CONFLICT (account_id, idempotency_key) DO UPDATE SET epoch = postroom_idempotency_calls.epoch + 1
`
	finishSet = `
ON CONFLICT (call_id, idx) DO UPDATE
SET send_id = EXCLUDED.send_id, status = EXCLUDED.status, code = EXCLUDED.code, reason = EXCLUDED.reason
WHERE postroom_idempotency_recipients.status IS NULL`

	// releaseSQL deletes the record of a claim that recorded nothing.
	releaseSQL = `
DELETE FROM postroom_idempotency_calls WHERE id = $1 AND epoch = $2
AND NOT EXISTS (SELECT 1 FROM postroom_idempotency_recipients WHERE call_id = $1)`
	hasEntriesSQL = `SELECT EXISTS (SELECT 1 FROM postroom_idempotency_recipients WHERE call_id = $1)`
	clearSQL      = `DELETE FROM postroom_idempotency_recipients WHERE call_id = $1`
	restartSQL    = `UPDATE postroom_idempotency_calls SET request_hash = $2, started_at = $3 WHERE id = $1`
	entriesSQL    = `SELECT idx, send_id, status, code, reason FROM postroom_idempotency_recipients WHERE call_id = $1 ORDER BY idx`
)

// postgresQueries are PostgreSQL's statements. A write locks its record
// (FOR SHARE) while it checks the epoch, so that it either commits before
// a claim that takes the key over bumps the epoch (which then sees it), or
// finds the epoch bumped: a holder taken over never writes a recipient
// the new holder did not read.
var postgresQueries = queries{
	claim: claimInsert + `RETURNING id, epoch, request_hash, started_at, xmax = 0`,
	handOver: `WITH c AS (SELECT id FROM postroom_idempotency_calls WHERE id = $1 AND epoch = $2 FOR SHARE)
INSERT INTO postroom_idempotency_recipients (call_id, idx, send_id) SELECT id, $3, $4 FROM c`,
	finish: `WITH c AS (SELECT id FROM postroom_idempotency_calls WHERE id = $1 AND epoch = $2 FOR SHARE)
INSERT INTO postroom_idempotency_recipients (call_id, idx, send_id, status, code, reason)
SELECT id, $3, $4, $5, $6, $7 FROM c` + finishSet,
	deleteExpired: `
DELETE FROM postroom_idempotency_calls WHERE id IN (
    SELECT id FROM postroom_idempotency_calls WHERE started_at < $1 LIMIT $2
    FOR UPDATE SKIP LOCKED)`,
}

// sqliteQueries are SQLite's statements. SQLite has no xmax: a record is
// new when its epoch is 1, as every claim after the first bumps it. It
// has no row locks either, nor needs them: its statements and
// transactions run one at a time.
var sqliteQueries = queries{
	claim: claimInsert + `RETURNING id, epoch, request_hash, started_at, epoch = 1`,
	handOver: `INSERT INTO postroom_idempotency_recipients (call_id, idx, send_id)
SELECT id, $3, $4 FROM postroom_idempotency_calls WHERE id = $1 AND epoch = $2`,
	finish: `INSERT INTO postroom_idempotency_recipients (call_id, idx, send_id, status, code, reason)
SELECT id, $3, $4, $5, $6, $7 FROM postroom_idempotency_calls WHERE id = $1 AND epoch = $2` + finishSet,
	deleteExpired: `
DELETE FROM postroom_idempotency_calls WHERE id IN (
    SELECT id FROM postroom_idempotency_calls WHERE started_at < $1 LIMIT $2)`,
}

// queriesOf returns engine's statements, or false for an engine SQL does
// not know.
func queriesOf(engine sqldb.Engine) (queries, bool) {
	switch engine {
	case sqldb.Postgres:
		return postgresQueries, true
	case sqldb.SQLite:
		return sqliteQueries, true
	}
	return queries{}, false
}
