package outbox

// A recipient's state, folded from the writes of its chunk.
//
// A job's run does not write a row per recipient: each of its writes is
// one row of postroom_outbox_results holding arrays (the recipients'
// indices, and for each a status, reason code, reason and send id), and
// the writes of a chunk are read in the order they were made (seq). A
// recipient's state is its first final result if it has one (a final
// result is never replaced: a later write naming the recipient, such as
// a reservation tried again after its answer was lost, changes nothing),
// else what the latest write naming it said: reserved (by the run of
// that write's epoch), deferred, or not tried ('', a reservation
// released). The view postroom_outbox_recipients folds the same way in
// SQL; TestFoldMatchesView holds the two together.
//
// A recipient's final result is written once: a run writes one for its
// own reservation or for a recipient it found without one, and the other
// writers (settling, Cancel) read the states under the chunk's lock and
// write only for recipients without one; a write tried again is not made
// twice. So the counts of final results (Status, Calls, Stats, the open
// chunks) count the final entries of the writes, without the fold.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/sqldb"
)

// Statuses of a write's entry, beside the final ones.
const (
	rowUntried  = ""         // not tried: a reservation released (see handover.finish)
	rowReserved = "reserved" // may have been handed over, outcome not written
	rowDeferred = "deferred" // to be retried
)

// isFinal reports whether status is a final result's.
func isFinal(status string) bool {
	return status != rowUntried && status != rowReserved && status != rowDeferred
}

// state is one recipient's state: status rowUntried (no write names it,
// or its reservation was released), rowReserved by the run of epoch,
// rowDeferred with the last attempt's code and reason, or a final result.
type state struct {
	status, code, reason, sendID string
	epoch                        int64
}

// entries are the recipients a write names, each with its status, code,
// reason and send id: the arrays of a postroom_outbox_results row (where
// code, reason and send_id are NULL when all their values are empty).
type entries struct {
	idx                          []int32
	status, code, reason, sendID []string
}

// grow makes room for n more recipients.
func (e *entries) grow(n int) {
	e.idx = slices.Grow(e.idx, n)
	e.status = slices.Grow(e.status, n)
	e.code = slices.Grow(e.code, n)
	e.reason = slices.Grow(e.reason, n)
	e.sendID = slices.Grow(e.sendID, n)
}

func (e *entries) add(i int32, status, code, reason, sendID string) {
	e.idx = append(e.idx, i)
	e.status = append(e.status, status)
	e.code = append(e.code, code)
	e.reason = append(e.reason, reason)
	e.sendID = append(e.sendID, sendID)
}

// addResult adds recipient i with result r.
func (e *entries) addResult(i int32, r postroom.Result) {
	e.add(i, string(r.Status), string(r.Code), r.Reason, r.SendID)
}

func (e *entries) len() int { return len(e.idx) }

// apply folds a write of epoch, naming e, into st, the states of the
// chunk's recipients from index first.
func (e *entries) apply(st []state, first int32, epoch int64) {
	for k, i := range e.idx {
		p := int(i - first)
		if p < 0 || p >= len(st) || isFinal(st[p].status) {
			continue
		}
		st[p] = state{status: e.status[k], code: at(e.code, k), reason: at(e.reason, k), sendID: at(e.sendID, k), epoch: epoch}
	}
}

// at returns v[k], or "" when v is empty: a column written as NULL
// because all its values were empty (see orNone).
func at(v []string, k int) string {
	if len(v) == 0 {
		return ""
	}
	return v[k]
}

// chunkStates reads the writes of the chunk of call callID from index
// first (count recipients), in the order they were made, and folds them.
func chunkStates(ctx context.Context, q sqldb.Querier, callID string, first int32, count int) ([]state, error) {
	rows, err := q.Query(ctx, chunkWritesSQL, callID, first)
	if err != nil {
		return nil, err
	}
	return foldRows(q.Engine(), rows, first, count)
}

// chunkWritesSQL reads the writes of a chunk ($1, $2) for foldRows.
const chunkWritesSQL = `SELECT epoch, idx, status, code, reason, send_id FROM postroom_outbox_results
	WHERE call_id = $1 AND first = $2 ORDER BY seq`

// foldRows folds the writes rows gives (chunkWritesSQL's, from a
// database of engine) into the states of the chunk's count recipients
// from index first, and closes rows.
func foldRows(engine sqldb.Engine, rows sqldb.Rows, first int32, count int) ([]state, error) {
	defer rows.Close()
	st := make([]state, count)
	var idx any = new([]int32) // PostgreSQL's integer[]
	var raw []byte             // SQLite's JSON array of integers
	if engine == sqldb.SQLite {
		idx = &raw
	}
	for rows.Next() {
		var epoch int64
		var e entries
		if err := rows.Scan(&epoch, idx, &e.status, &e.code, &e.reason, &e.sendID); err != nil {
			return nil, err
		}
		if engine == sqldb.SQLite {
			if err := json.Unmarshal(raw, &e.idx); err != nil {
				return nil, fmt.Errorf("a write's indices: %w", err)
			}
		} else {
			e.idx = *idx.(*[]int32)
		}
		if n := len(e.idx); len(e.status) != n || !fits(e.code, n) || !fits(e.reason, n) || !fits(e.sendID, n) {
			return nil, errors.New("a write's arrays have different lengths")
		}
		e.apply(st, first, epoch)
	}
	return st, rows.Err()
}

// fits reports whether a column's array v goes with n indices: n values,
// or none (all empty).
func fits(v []string, n int) bool { return len(v) == n || len(v) == 0 }

// copyWrites writes, through tx, one write outside a run (epoch 0, and
// a negative write number: PostgreSQL's sequence's, or on SQLite one
// below the chunk's lowest) per chunk of call callID (by its first index)
// that names a recipient: Enqueue's refusals, Cancel's results.
func copyWrites(ctx context.Context, tx sqldb.Tx, callID string, writes map[int32]*entries) error {
	var rows [][]any
	for first, e := range writes {
		if e.len() > 0 {
			rows = append(rows, []any{callID, first, int64(0), e.idx, e.status, e.code, e.reason, e.sendID})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	columns := []string{"call_id", "first", "epoch", "idx", "status", "code", "reason", "send_id"}
	if tx.Engine() == sqldb.SQLite {
		// SQLite has no sequence: the write numbers below those the
		// call's chunks have, read under the write lock the transaction
		// holds.
		low := map[int32]int64{}
		r, err := tx.Query(ctx, `SELECT first, min(wseq) FROM postroom_outbox_results
			WHERE call_id = $1 AND epoch = 0 GROUP BY first`, callID)
		if err != nil {
			return err
		}
		for r.Next() {
			var first int32
			var w int64
			if err := r.Scan(&first, &w); err != nil {
				r.Close()
				return err
			}
			low[first] = w
		}
		if err := r.Err(); err != nil {
			r.Close()
			return err
		}
		if err := r.Close(); err != nil {
			return err
		}
		for k, row := range rows {
			first := row[1].(int32)
			rows[k] = append(row, min(low[first], 0)-1)
		}
		columns = append(columns, "wseq")
	}
	_, err := tx.CopyFrom(ctx, "postroom_outbox_results", columns, rows)
	return err
}
