package outbox

// The SQL of a job's run. Every write of a run names the epoch its lease
// got, so that a run that outlived its turn changes nothing that a newer
// run of the same job owns.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/postroom/postroom"
)

// Internal statuses of a recipient's row, beside the final ones.
const (
	rowReserved = "reserved" // may have been handed over, outcome not written
	rowDeferred = "deferred" // to be retried
)

// lease is one run's hold on its job's recipients.
type lease struct {
	pool    queryer
	args    SendArgs
	epoch   int64
	op      postroom.Operation
	started time.Time
	chunk   []byte         // the recipients' JSON
	rowed   map[int32]bool // recipients with a row (deferred) when the run began: see pending
}

// queryer is what a lease needs of a pgxpool.Pool.
type queryer interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// errGone: the job's call was deleted.
var errGone = errors.New("outbox: the job's call is gone")

// takeLease bumps the job's epoch: from now on, the writes of any earlier
// run of the job change nothing.
func takeLease(ctx context.Context, q queryer, args SendArgs) (*lease, error) {
	l := &lease{pool: q, args: args}
	var op int16
	err := q.QueryRow(ctx, `UPDATE postroom_outbox_chunks ch SET epoch = ch.epoch + 1
		FROM postroom_outbox_calls c
		WHERE ch.call_id = $1 AND ch.first = $2 AND c.id = ch.call_id
		RETURNING ch.epoch, ch.recipients, c.operation, c.started_at`,
		args.CallID, int32(args.First)).Scan(&l.epoch, &l.chunk, &op, &l.started)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errGone
	}
	if err != nil {
		return nil, fmt.Errorf("outbox: lease: %w", err)
	}
	l.op = postroom.Operation(op)
	return l, nil
}

// interruptedReason is the Reason of a recipient left reserved by a run
// that stopped. A run reserves a recipient just before handing its
// message over (see handover), so the message may have left; a recipient
// the run had not reserved yet has no row, and the next run sends it.
const interruptedReason = string(postroom.ReasonInterrupted) + ": the message may have been handed over before the process stopped; its outcome was not written"

// pending settles the recipients that an earlier run left reserved (they
// become unknown, interrupted) and returns the recipients still to send:
// those with no row, and the deferred ones with their last reason.
func (l *lease) pending(ctx context.Context) (todo []int32, lastReason map[int32]string, err error) {
	a := l.args
	lo, hi := int32(a.First), int32(a.First+a.Count)
	if _, err := l.pool.Exec(ctx, `UPDATE postroom_outbox_recipients SET status = 'unknown', code = $5, reason = $6
		WHERE call_id = $1 AND idx >= $2 AND idx < $3 AND status = 'reserved' AND epoch < $4`,
		a.CallID, lo, hi, l.epoch, string(postroom.ReasonInterrupted), interruptedReason); err != nil {
		return nil, nil, fmt.Errorf("outbox: pending: %w", err)
	}
	rows, err := l.pool.Query(ctx, `SELECT idx, status, reason FROM postroom_outbox_recipients
		WHERE call_id = $1 AND idx >= $2 AND idx < $3`, a.CallID, lo, hi)
	if err != nil {
		return nil, nil, fmt.Errorf("outbox: pending: %w", err)
	}
	defer rows.Close()
	done := make([]bool, a.Count)
	lastReason = map[int32]string{}
	l.rowed = map[int32]bool{}
	for rows.Next() {
		var idx int32
		var status, reason string
		if err := rows.Scan(&idx, &status, &reason); err != nil {
			return nil, nil, fmt.Errorf("outbox: pending: %w", err)
		}
		if status == rowDeferred {
			lastReason[idx] = reason
			l.rowed[idx] = true
			continue
		}
		done[idx-lo] = true // final, or reserved by a newer run
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("outbox: pending: %w", err)
	}
	for k, d := range done {
		if !d {
			todo = append(todo, lo+int32(k))
		}
	}
	return todo, lastReason, nil
}

// reserve marks recipients idx (with their emails) reserved by this run,
// in one write, and returns those it reserved: the ones with no row or
// deferred, or none when a newer run of the job holds the lease. A
// reserved recipient's message may be handed over from then on. It may
// be tried again after an error (the answer lost to a restart): the
// recipients it reserved the first time are returned again.
func (l *lease) reserve(ctx context.Context, idx []int32, emails []string) ([]int32, error) {
	got, err := l.reserveWith(ctx, l.reserveSQL(idx), idx, emails)
	if uniqueViolation(err) {
		got, err = l.reserveWith(ctx, reserveSQL, idx, emails)
	}
	return got, err
}

func (l *lease) reserveWith(ctx context.Context, sql string, idx []int32, emails []string) ([]int32, error) {
	rows, err := l.pool.Query(ctx, sql, l.reserveArgs(idx, emails)...)
	if err != nil {
		return nil, fmt.Errorf("outbox: reserve: %w", err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, fmt.Errorf("outbox: reserve: %w", err)
	}
	return got, nil
}

// reserveSQL is the statement that reserves idx: a plain insert when
// none of them had a row when the run began, which costs a third less
// than an upsert; a row that appeared since (Cancel's, or this run's own
// when a write is tried again) makes it fail, and the upsert follows.
func (l *lease) reserveSQL(idx []int32) string {
	for _, i := range idx {
		if l.rowed[i] {
			return reserveSQL
		}
	}
	return reserveNewSQL
}

// uniqueViolation reports whether err is PostgreSQL's unique_violation.
func uniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

const reserveSQL = `WITH lease AS (
		SELECT 1 FROM postroom_outbox_chunks WHERE call_id = $1 AND first = $2 AND epoch = $3 FOR SHARE
	)
	INSERT INTO postroom_outbox_recipients AS r (call_id, idx, email, status, epoch)
	SELECT $1, v.i, v.e, 'reserved', $3 FROM unnest($4::integer[], $5::text[]) AS v(i, e)
	WHERE EXISTS (SELECT 1 FROM lease)
	ON CONFLICT (call_id, idx) DO UPDATE SET status = 'reserved', epoch = excluded.epoch
	WHERE r.status = 'deferred' OR (r.status = 'reserved' AND r.epoch = excluded.epoch)
	RETURNING r.idx`

// reserveNewSQL is reserveSQL for recipients without a row.
const reserveNewSQL = `WITH lease AS (
		SELECT 1 FROM postroom_outbox_chunks WHERE call_id = $1 AND first = $2 AND epoch = $3 FOR SHARE
	)
	INSERT INTO postroom_outbox_recipients AS r (call_id, idx, email, status, epoch)
	SELECT $1, v.i, v.e, 'reserved', $3 FROM unnest($4::integer[], $5::text[]) AS v(i, e)
	WHERE EXISTS (SELECT 1 FROM lease)
	RETURNING r.idx`

func (l *lease) reserveArgs(idx []int32, emails []string) []any {
	return []any{l.args.CallID, int32(l.args.First), l.epoch, idx, emails}
}

// outcomes are results to record: recipient idx[k], with emails[k], has
// results[k].
type outcomes struct {
	idx     []int32
	emails  []string
	results []postroom.Result
}

func (o *outcomes) add(i int32, email string, r postroom.Result) {
	o.idx = append(o.idx, i)
	o.emails = append(o.emails, email)
	o.results = append(o.results, r)
}

func (o *outcomes) len() int { return len(o.idx) }

// record writes the outcomes out, in one write, unless a newer run holds
// the lease: a recipient this run reserved gets its result (a deferred
// one keeps the row to retry, any other is final); a recipient it did
// not reserve (no row, or deferred), whose message was never handed
// over, gets only a final result (the Mailer found it invalid). A row
// that is no longer this run's reservation (a newer run settled it as
// interrupted) is left as it is.
//
// It is an upsert, not an UPDATE ... FROM unnest: so each row is found
// through the primary key, whatever the planner thinks of the unnest's
// size.
func (l *lease) record(ctx context.Context, out outcomes) error {
	if _, err := l.pool.Exec(ctx, recordSQL, l.recordArgs(out)...); err != nil {
		return fmt.Errorf("outbox: record: %w", err)
	}
	return nil
}

const recordSQL = `WITH lease AS (
		SELECT 1 FROM postroom_outbox_chunks WHERE call_id = $1 AND first = $2 AND epoch = $3 FOR SHARE
	)
	INSERT INTO postroom_outbox_recipients AS r (call_id, idx, email, status, code, reason, send_id, epoch)
	SELECT $1, v.i, v.e, v.s, v.c, v.reason, v.id, $3
	FROM unnest($4::integer[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[]) AS v(i, e, s, c, reason, id)
	WHERE EXISTS (SELECT 1 FROM lease)
	ON CONFLICT (call_id, idx) DO UPDATE
	SET status = excluded.status, code = excluded.code, reason = excluded.reason, send_id = excluded.send_id, epoch = excluded.epoch
	WHERE (r.epoch = excluded.epoch AND r.status = 'reserved') OR r.status = 'deferred'`

func (l *lease) recordArgs(out outcomes) []any {
	n := out.len()
	status := make([]string, n)
	code := make([]string, n)
	reason := make([]string, n)
	sendID := make([]string, n)
	for k, r := range out.results {
		status[k], code[k], reason[k], sendID[k] = string(r.Status), string(r.Code), r.Reason, r.SendID
	}
	return []any{l.args.CallID, int32(l.args.First), l.epoch, out.idx, out.emails, status, code, reason, sendID}
}

// save records out and reserves recipients idx (with their emails) in
// one statement (one round trip, one lock of the lease), and returns the
// recipients reserved, as record and reserve do. Either part may be
// empty. The two parts never name the same recipient: a result is known
// only for a recipient whose message is past its reservation.
func (l *lease) save(ctx context.Context, out outcomes, idx []int32, emails []string) ([]int32, error) {
	switch {
	case len(idx) == 0:
		return nil, l.record(ctx, out)
	case out.len() == 0:
		return l.reserve(ctx, idx, emails)
	}
	sql := saveSQL
	if l.reserveSQL(idx) == reserveNewSQL {
		sql = saveNewSQL
	}
	got, err := l.saveWith(ctx, sql, out, idx, emails)
	if uniqueViolation(err) {
		got, err = l.saveWith(ctx, saveSQL, out, idx, emails)
	}
	return got, err
}

func (l *lease) saveWith(ctx context.Context, sql string, out outcomes, idx []int32, emails []string) ([]int32, error) {
	rows, err := l.pool.Query(ctx, sql, append(l.recordArgs(out), idx, emails)...)
	if err != nil {
		return nil, fmt.Errorf("outbox: save: %w", err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, fmt.Errorf("outbox: save: %w", err)
	}
	return got, nil
}

// saveRecord is recordSQL (its arguments $1 to $9) as the start of a
// statement that reserves too.
const saveRecord = `WITH lease AS (
		SELECT 1 FROM postroom_outbox_chunks WHERE call_id = $1 AND first = $2 AND epoch = $3 FOR SHARE
	), record AS (
		INSERT INTO postroom_outbox_recipients AS r (call_id, idx, email, status, code, reason, send_id, epoch)
		SELECT $1, v.i, v.e, v.s, v.c, v.reason, v.id, $3
		FROM unnest($4::integer[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[]) AS v(i, e, s, c, reason, id)
		WHERE EXISTS (SELECT 1 FROM lease)
		ON CONFLICT (call_id, idx) DO UPDATE
		SET status = excluded.status, code = excluded.code, reason = excluded.reason, send_id = excluded.send_id, epoch = excluded.epoch
		WHERE (r.epoch = excluded.epoch AND r.status = 'reserved') OR r.status = 'deferred'
	)
	INSERT INTO postroom_outbox_recipients AS r (call_id, idx, email, status, epoch)
	SELECT $1, v.i, v.e, 'reserved', $3 FROM unnest($10::integer[], $11::text[]) AS v(i, e)
	WHERE EXISTS (SELECT 1 FROM lease)`

// saveSQL and saveNewSQL are recordSQL with reserveSQL, and with
// reserveNewSQL (the recipients $10, with their emails $11), in one
// statement.
const (
	saveSQL = saveRecord + `
	ON CONFLICT (call_id, idx) DO UPDATE SET status = 'reserved', epoch = excluded.epoch
	WHERE r.status = 'deferred' OR (r.status = 'reserved' AND r.epoch = excluded.epoch)
	RETURNING r.idx`
	saveNewSQL = saveRecord + `
	RETURNING r.idx`
)

// release undoes this run's reservation of recipients idx, whose
// messages were never handed over (a reservation write failed, and may
// have been made all the same): a recipient that was deferred is
// deferred again, with its last reason; another loses its row, and the
// next run sends it. Nothing changes when a newer run holds the lease.
func (l *lease) release(ctx context.Context, idx []int32) error {
	a := l.args
	_, err := l.pool.Exec(ctx, `WITH lease AS (
			SELECT 1 FROM postroom_outbox_chunks WHERE call_id = $1 AND first = $2 AND epoch = $3 FOR SHARE
		), fresh AS (
			DELETE FROM postroom_outbox_recipients
			WHERE call_id = $1 AND idx = ANY($4) AND status = 'reserved' AND epoch = $3 AND code = ''
			  AND EXISTS (SELECT 1 FROM lease)
		)
		UPDATE postroom_outbox_recipients SET status = 'deferred'
		WHERE call_id = $1 AND idx = ANY($4) AND status = 'reserved' AND epoch = $3 AND code <> ''
		  AND EXISTS (SELECT 1 FROM lease)`,
		a.CallID, int32(a.First), l.epoch, idx)
	if err != nil {
		return fmt.Errorf("outbox: release: %w", err)
	}
	return nil
}

// settle gives recipients idx (not reserved: no row, or deferred) the
// final status with reason code and reasons[k] without sending them, in
// one write, unless a newer run holds the lease.
func (l *lease) settle(ctx context.Context, idx []int32, emails []string, status postroom.Status, code postroom.ReasonCode, reasons []string) error {
	a := l.args
	_, err := l.pool.Exec(ctx, `WITH lease AS (
			SELECT 1 FROM postroom_outbox_chunks WHERE call_id = $1 AND first = $2 AND epoch = $3 FOR SHARE
		)
		INSERT INTO postroom_outbox_recipients AS r (call_id, idx, email, status, code, reason, epoch)
		SELECT $1, v.i, v.e, $6, $7, v.reason, $3 FROM unnest($4::integer[], $5::text[], $8::text[]) AS v(i, e, reason)
		WHERE EXISTS (SELECT 1 FROM lease)
		ON CONFLICT (call_id, idx) DO UPDATE
		SET status = excluded.status, code = excluded.code, reason = excluded.reason, epoch = excluded.epoch
		WHERE r.status = 'deferred'`,
		a.CallID, int32(a.First), l.epoch, idx, emails, string(status), string(code), reasons)
	if err != nil {
		return fmt.Errorf("outbox: settle: %w", err)
	}
	return nil
}
