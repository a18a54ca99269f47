package outbox

// The SQL of a job's run. Every write of a run names the epoch its lease
// got, so that a run that outlived its turn changes nothing that a newer
// run of the same job owns. A write is one row of postroom_outbox_results
// (see fold.go).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/sqldb"
)

// lease is one run's hold on its job's recipients.
type lease struct {
	db      sqldb.DB
	args    SendArgs
	epoch   int64
	op      postroom.Operation
	started time.Time
	chunk   []byte          // the recipients' JSON
	states  []state         // the recipients' states when the run began
	prior   map[int32]state // the deferred recipients when the run began: see pending
	wseq    atomic.Int32    // the number of the run's last write (see put)
}

// errGone: the job's call was deleted.
var errGone = errors.New("outbox: the job's call is gone")

// takeLease bumps the job's epoch: from now on, the writes of any earlier
// run of the job change nothing. Then it reads the chunk's writes, for
// pending: no write of an earlier run lands after the bump (a write
// names its epoch, and on PostgreSQL holds the chunk's row FOR SHARE,
// which the bump waits for).
func takeLease(ctx context.Context, db sqldb.DB, args SendArgs) (*lease, error) {
	l := &lease{db: db, args: args}
	var op int16
	err := db.QueryRow(ctx, dialect(db, `UPDATE postroom_outbox_chunks ch SET epoch = ch.epoch + 1
		FROM postroom_outbox_calls c
		WHERE ch.call_id = $1 AND ch.first = $2 AND c.id = ch.call_id
		RETURNING ch.epoch, ch.recipients, c.operation, c.started_at`,
		// SQLite's RETURNING names the updated table only.
		`UPDATE postroom_outbox_chunks SET epoch = epoch + 1
		WHERE call_id = $1 AND first = $2
		RETURNING epoch, recipients,
			(SELECT operation FROM postroom_outbox_calls c WHERE c.id = call_id),
			(SELECT started_at FROM postroom_outbox_calls c WHERE c.id = call_id)`),
		args.CallID, int32(args.First)).Scan(&l.epoch, &l.chunk, &op, &l.started)
	if errors.Is(err, sqldb.ErrNoRows) {
		return nil, errGone
	}
	if err != nil {
		return nil, fmt.Errorf("outbox: lease: %w", err)
	}
	if l.states, err = chunkStates(ctx, db, args.CallID, int32(args.First), args.Count); err != nil {
		return nil, fmt.Errorf("outbox: lease: %w", err)
	}
	l.op = postroom.Operation(op)
	return l, nil
}

// interruptedReason is the Reason of a recipient left reserved by a run
// that stopped. A run reserves a recipient just before handing its
// message over (see handover), so the message may have left; a recipient
// the run had not reserved yet has no reservation, and the next run sends
// it.
const interruptedReason = string(postroom.ReasonInterrupted) + ": the message may have been handed over before the process stopped; its outcome was not written"

// pending settles the recipients that an earlier run left reserved (they
// become unknown, interrupted) and returns the recipients still to send:
// those not tried, and the deferred ones, whose last attempt it keeps
// (last).
func (l *lease) pending(ctx context.Context) (todo []int32, err error) {
	a := l.args
	var stale []int32
	l.prior = map[int32]state{}
	for k, s := range l.states {
		i := int32(a.First + k)
		switch {
		case s.status == rowUntried:
			todo = append(todo, i)
		case s.status == rowDeferred:
			todo = append(todo, i)
			l.prior[i] = s
		case s.status == rowReserved && s.epoch < l.epoch:
			stale = append(stale, i)
		}
		// Final, or reserved by a newer run: not this run's.
	}
	if len(stale) > 0 {
		reasons := make([]string, len(stale))
		for k := range reasons {
			reasons[k] = interruptedReason
		}
		stillStale := func(s state) bool { return s.status == rowReserved && s.epoch < l.epoch }
		if err := l.settleWhere(ctx, stale, stillStale, postroom.StatusUnknown, postroom.ReasonInterrupted, reasons); err != nil {
			return nil, err
		}
	}
	return todo, nil
}

// last returns the reason of recipient i's last attempt, when the run
// found it deferred.
func (l *lease) last(i int32) string { return l.prior[i].reason }

// write is one write of a run: mine, the results of recipients this run
// reserved (and releases of its reservations), and open, the recipients
// it reserves now (status rowReserved) and the final results of
// recipients it did not reserve (the Mailer found them invalid before
// handing them over).
type write struct {
	seq   int32
	mine  entries
	open  entries
	tries int // the times put sent it
}

// newWrite returns the run's next write.
func (l *lease) newWrite() *write { return &write{seq: l.wseq.Add(1)} }

// putOutcome is what became of a write.
type putOutcome int

const (
	putDone     putOutcome = iota // all of it is written
	putMineOnly                   // the call was cancelled: open was not written, mine was
	putStopped                    // nothing was written: a newer run holds the lease, or the call was cancelled and w has no mine
)

// put writes w in one statement, one row, unless a newer run holds the
// lease; when the chunk's call was cancelled (see Cancel), only its mine
// part. It may be tried again after an error (its answer lost to a
// restart): a write that was made is not made twice, and its outcome is
// reported as it was.
func (l *lease) put(ctx context.Context, w *write) (putOutcome, error) {
	a := l.args
	w.tries++
	all := entries{
		idx:    slices.Concat(w.mine.idx, w.open.idx),
		status: slices.Concat(w.mine.status, w.open.status),
		code:   orNone(slices.Concat(w.mine.code, w.open.code)),
		reason: orNone(slices.Concat(w.mine.reason, w.open.reason)),
		sendID: orNone(slices.Concat(w.mine.sendID, w.open.sendID)),
	}
	var n int
	var err error
	if l.db.Engine() == sqldb.SQLite {
		n, err = l.putSQLite(ctx, w, all)
	} else {
		args := []any{a.CallID, int32(a.First), l.epoch, w.seq, all.idx, all.status, all.code, all.reason, all.sendID, int32(w.mine.len())}
		sql := putSQL
		if w.tries > 1 {
			sql = putAgainSQL
		}
		err = l.db.QueryRow(ctx, sql, args...).Scan(&n)
	}
	if errors.Is(err, sqldb.ErrNoRows) && w.tries > 1 {
		// Made by an earlier try, or not at all.
		err = l.db.QueryRow(ctx, dialect(l.db, `SELECT cardinality(idx) FROM postroom_outbox_results
			WHERE call_id = $1 AND first = $2 AND epoch = $3 AND wseq = $4`, `SELECT json_array_length(idx) FROM postroom_outbox_results
			WHERE call_id = $1 AND first = $2 AND epoch = $3 AND wseq = $4`), a.CallID, int32(a.First), l.epoch, w.seq).Scan(&n)
	}
	switch {
	case errors.Is(err, sqldb.ErrNoRows):
		return putStopped, nil
	case err != nil:
		return 0, fmt.Errorf("outbox: write: %w", permanent(l.db, err))
	case n == all.len():
		return putDone, nil
	}
	return putMineOnly, nil
}

// orNone returns nil (SQL's NULL) for a column whose values are all
// empty, as a reservation's code, reason and send id are: a NULL array
// reads as empty strings (see entries.apply), and costs PostgreSQL
// nothing to receive and keep.
func orNone(v []string) []string {
	for _, s := range v {
		if s != "" {
			return v
		}
	}
	return nil
}

// putSQL is put's statement: $1 to $4 the chunk, the run's epoch and the
// write's number; $5 to $9 the arrays, mine's $10 entries first, then
// open's. It returns the size of the write made, or no row.
const putSQL = putInsert + `
	RETURNING cardinality(idx)`

// putInsert is the insert of putSQL and putAgainSQL.
const putInsert = `INSERT INTO postroom_outbox_results (call_id, first, epoch, wseq, idx, status, code, reason, send_id)
	SELECT $1, $2, $3, $4,
		CASE WHEN ch.canceled THEN ($5::integer[])[1:$10] ELSE $5::integer[] END,
		CASE WHEN ch.canceled THEN ($6::text[])[1:$10] ELSE $6::text[] END,
		CASE WHEN ch.canceled THEN ($7::text[])[1:$10] ELSE $7::text[] END,
		CASE WHEN ch.canceled THEN ($8::text[])[1:$10] ELSE $8::text[] END,
		CASE WHEN ch.canceled THEN ($9::text[])[1:$10] ELSE $9::text[] END
	FROM postroom_outbox_chunks ch
	WHERE ch.call_id = $1 AND ch.first = $2 AND ch.epoch = $3 AND ($10 > 0 OR NOT ch.canceled)
	FOR SHARE OF ch`

// putAgainSQL is putSQL for a write tried again: one made by an earlier
// try is left as it is, and the statement returns no row.
const putAgainSQL = putInsert + `
	ON CONFLICT (call_id, first, epoch, wseq) DO NOTHING
	RETURNING cardinality(idx)`

// putSQLite is put's statement on SQLite, where a statement runs alone
// (no other can come between two): the whole write unless the chunk's
// call was cancelled, and then, when it was, mine alone. It returns the
// size of the write made, or ErrNoRows. Two short statements, not one
// that slices JSON arrays: SQLite parses each statement anew, and the
// parsing is a good part of a write's cost.
func (l *lease) putSQLite(ctx context.Context, w *write, all entries) (int, error) {
	a := l.args
	write := func(sql string, e entries) (n int, err error) {
		err = l.db.QueryRow(ctx, sql, a.CallID, int32(a.First), l.epoch, w.seq, e.idx, e.status, e.code, e.reason, e.sendID).Scan(&n)
		return n, err
	}
	again := ""
	if w.tries > 1 {
		again = sqlitePutAgain
	}
	n, err := write(sqlitePutInsert+` AND NOT canceled`+again+sqlitePutReturning, all)
	if !errors.Is(err, sqldb.ErrNoRows) || w.mine.len() == 0 {
		return n, err
	}
	mine := entries{idx: w.mine.idx, status: w.mine.status, code: orNone(w.mine.code), reason: orNone(w.mine.reason), sendID: orNone(w.mine.sendID)}
	return write(sqlitePutInsert+again+sqlitePutReturning, mine)
}

// The parts of putSQLite's statements: $1 to $4 the chunk, the run's
// epoch and the write's number, $5 to $9 the JSON arrays.
const (
	sqlitePutInsert = `INSERT INTO postroom_outbox_results (call_id, first, epoch, wseq, idx, status, code, reason, send_id)
	SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9 FROM postroom_outbox_chunks
	WHERE call_id = $1 AND first = $2 AND epoch = $3`
	sqlitePutAgain     = ` ON CONFLICT (call_id, first, epoch, wseq) DO NOTHING`
	sqlitePutReturning = ` RETURNING json_array_length(idx)`
)

// settle gives recipients idx, whose messages this run did not hand
// over, the final or deferred status with reason code and reasons[k],
// without sending them: those still not tried, deferred, or reserved by
// this run (a batch reserved ahead, see handover) when it writes (see
// settleWhere).
func (l *lease) settle(ctx context.Context, idx []int32, status postroom.Status, code postroom.ReasonCode, reasons []string) error {
	open := func(s state) bool {
		return s.status == rowUntried || s.status == rowDeferred || (s.status == rowReserved && s.epoch == l.epoch)
	}
	return l.settleWhere(ctx, idx, open, status, code, reasons)
}

// settleWhere gives each recipient idx[k] whose state satisfies which,
// read under the chunk's lock, the status with reason code and
// reasons[k], in one transaction, unless a newer run holds the lease.
// Reading under the lock keeps Cancel out: a recipient it settled is not
// settled again. It is for the rarer writes (an expiry, a refusal, a
// giving up, an interrupted run's leftovers); it is safe to try again.
func (l *lease) settleWhere(ctx context.Context, idx []int32, which func(state) bool, status postroom.Status, code postroom.ReasonCode, reasons []string) error {
	a := l.args
	err := sqldb.BeginFunc(ctx, l.db, func(tx sqldb.Tx) error {
		var one int
		err := tx.QueryRow(ctx, dialect(tx, `SELECT 1 FROM postroom_outbox_chunks
			WHERE call_id = $1 AND first = $2 AND epoch = $3 FOR SHARE`, `SELECT 1 FROM postroom_outbox_chunks
			WHERE call_id = $1 AND first = $2 AND epoch = $3`), a.CallID, int32(a.First), l.epoch).Scan(&one)
		if errors.Is(err, sqldb.ErrNoRows) {
			return nil // a newer run holds the lease
		}
		if err != nil {
			return err
		}
		st, err := chunkStates(ctx, tx, a.CallID, int32(a.First), a.Count)
		if err != nil {
			return err
		}
		var e entries
		for k, i := range idx {
			if which(st[int(i)-a.First]) {
				e.add(i, string(status), string(code), reasons[k], "")
			}
		}
		if e.len() == 0 {
			return nil
		}
		_, err = tx.Exec(ctx, `INSERT INTO postroom_outbox_results (call_id, first, epoch, wseq, idx, status, code, reason, send_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			a.CallID, int32(a.First), l.epoch, l.newWrite().seq, e.idx, e.status, e.code, e.reason, e.sendID)
		return err
	})
	if err != nil {
		return fmt.Errorf("outbox: settle: %w", err)
	}
	return nil
}

// release adds to w, as mine, the return of this run's reservation of
// recipient i, whose message was never handed over (a reservation write
// failed, and may have been made all the same), to what it was: a
// recipient that was deferred is deferred again, with its last attempt;
// another is not tried, and the next run sends it. A recipient with a
// final result keeps it.
func (l *lease) release(w *write, i int32) {
	if s, ok := l.prior[i]; ok {
		w.mine.add(i, rowDeferred, s.code, s.reason, "")
	} else {
		w.mine.add(i, rowUntried, "", "", "")
	}
}
