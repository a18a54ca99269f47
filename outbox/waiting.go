package outbox

// What a call's recipients without a final result are waiting for.

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/sqldb"
)

// WaitingState is why a recipient has no final result yet: the root
// package's, so that httpapi serves it without importing this package.
type WaitingState = postroom.WaitingState

// The states of a waiting recipient (see postroom.WaitingNew).
const (
	WaitingNew      = postroom.WaitingNew
	WaitingSending  = postroom.WaitingSending
	WaitingDeferred = postroom.WaitingDeferred
)

// WaitingRecipient is a recipient of a call without a final result, as
// Waiting reports it: postroom.WaitingRecipient. Its Attempts is the
// number of runs its job has had so far (River's failed and current
// attempts, and the runs that ended deferring some recipients): each run
// tries each of its waiting recipients once, at most, so it is an upper
// bound on the recipient's own attempts. Its NextAttempt is when its job
// runs next: River's scheduled time of a job that waits (deferred, failed
// or sent later), and about now for one ready to run; nil while the job
// runs, and when the job is gone (it ended, for instance cancelled,
// before the recipient got a result).
type WaitingRecipient = postroom.WaitingRecipient

// Waiting returns the recipients of call callID that have no final
// result yet, in input order, with their last attempt and next one. A
// done call gives an empty list; an unknown id is ErrNotFound. It reads
// the chunks of the call's stored recipients that have some without a
// final result, their recipients' states, and River's jobs of the call (River's
// JobList).
func (o *Outbox) Waiting(ctx context.Context, callID string) ([]WaitingRecipient, error) {
	var exists bool
	if err := o.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM postroom_outbox_calls WHERE id = $1)`, callID).Scan(&exists); err != nil {
		return nil, fmt.Errorf("outbox: Waiting: %w", err)
	}
	if !exists {
		return nil, ErrNotFound
	}
	chunks, err := openChunks(ctx, o.db, callID)
	if err != nil {
		return nil, err
	}
	if len(chunks) == 0 {
		return []WaitingRecipient{}, nil
	}
	// The states of the open chunks' recipients: a recipient without one
	// has not been tried.
	firsts := make([]int32, len(chunks))
	for k, c := range chunks {
		firsts[k] = c.first
	}
	rows, err := o.db.Query(ctx, dialect(o.db, `SELECT r.idx, r.status, r.code, r.reason FROM postroom_outbox_recipients r
		WHERE r.call_id = $1 AND r.first = ANY($2)`, `SELECT r.idx, r.status, r.code, r.reason FROM postroom_outbox_recipients r
		WHERE r.call_id = $1 AND r.first IN (SELECT value FROM json_each($2))`), callID, firsts)
	if err != nil {
		return nil, fmt.Errorf("outbox: Waiting: %w", err)
	}
	type row struct{ status, code, reason string }
	found := map[int32]row{}
	for rows.Next() {
		var i int32
		var r row
		if err := rows.Scan(&i, &r.status, &r.code, &r.reason); err != nil {
			rows.Close()
			return nil, fmt.Errorf("outbox: Waiting: %w", err)
		}
		found[i] = r
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("outbox: Waiting: %w", err)
	}
	waiting := []WaitingRecipient{}
	var firstOf []int
	for _, c := range chunks {
		for k, email := range c.emails {
			i := c.first + int32(k)
			w := WaitingRecipient{Index: int(i), Email: email}
			r, ok := found[i]
			switch {
			case !ok:
				w.State = WaitingNew
			case r.status == rowReserved:
				w.State = WaitingSending
			case r.status == rowDeferred:
				w.State = WaitingDeferred
				w.LastStatus, w.LastCode, w.LastReason = r.status, r.code, r.reason
			default:
				continue // final
			}
			waiting = append(waiting, w)
			firstOf = append(firstOf, int(c.first))
		}
	}
	if len(waiting) == 0 {
		return waiting, nil
	}
	jobs, err := o.callJobs(ctx, nil, callID)
	if err != nil {
		return nil, err
	}
	byFirst := make(map[int]*rivertype.JobRow, len(jobs))
	for _, j := range jobs {
		byFirst[j.first] = j.row // one job per chunk; a newer one wins
	}
	for k := range waiting {
		j := byFirst[firstOf[k]]
		if j == nil {
			continue
		}
		waiting[k].Attempts = runs(j)
		switch j.State {
		case rivertype.JobStateAvailable, rivertype.JobStateScheduled, rivertype.JobStateRetryable, rivertype.JobStatePending:
			at := j.ScheduledAt
			waiting[k].NextAttempt = &at
		}
	}
	return waiting, nil
}

// runs is the number of runs of job so far: River counts a snooze (a run
// that deferred recipients) in the job's metadata, not in its attempts.
func runs(job *rivertype.JobRow) int {
	var meta struct {
		Snoozes int `json:"snoozes"`
	}
	_ = json.Unmarshal(job.Metadata, &meta) // absent: no snooze yet
	return job.Attempt + meta.Snoozes
}

// callJob is one River job of a call, with the first index of its range.
type callJob struct {
	first int
	row   *rivertype.JobRow
}

// callJobs returns the River jobs of call callID (kind
// "postroom_outbox_send", args call_id), through tx when it is not nil,
// oldest first, in every state.
func (o *Outbox) callJobs(ctx context.Context, tx sqldb.Tx, callID string) ([]callJob, error) {
	where, named := o.river.argsWhere(callID)
	params := river.NewJobListParams().
		Kinds(SendArgs{}.Kind()).
		Where(where, named).
		OrderBy(river.JobListOrderByID, river.SortOrderAsc).
		First(1000)
	var jobs []callJob
	for {
		res, err := o.river.list(ctx, tx, params)
		if err != nil {
			return nil, fmt.Errorf("outbox: jobs of call %s: %w", callID, err)
		}
		for _, row := range res.Jobs {
			var a SendArgs
			if err := json.Unmarshal(row.EncodedArgs, &a); err != nil {
				return nil, fmt.Errorf("outbox: jobs of call %s: job %d: %w", callID, row.ID, err)
			}
			jobs = append(jobs, callJob{first: a.First, row: row})
		}
		if len(res.Jobs) < 1000 || res.LastCursor == nil {
			return jobs, nil
		}
		params = params.After(res.LastCursor)
	}
}
