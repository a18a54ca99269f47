package outbox

// Listing calls: an account's calls, newest first, with their counts.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/accountid"
)

// DefaultCallsLimit is how many calls Calls returns when
// CallsQuery.Limit is zero; MaxCallsLimit is the most it returns.
const (
	DefaultCallsLimit = 50
	MaxCallsLimit     = 1000
)

// ErrBadCursor: a CallsQuery.Before that Calls did not return.
var ErrBadCursor = errors.New("outbox: malformed calls cursor")

// Cursor marks a place in an account's list of calls, as Calls returns
// it: opaque, to be passed back as CallsQuery.Before for the next page.
// The zero value is the start of the list (the newest call).
type Cursor string

// CallsQuery selects the calls Calls lists.
type CallsQuery struct {
	// AccountID is the account whose calls are listed. Empty lists the
	// calls enqueued without an account.
	AccountID string
	// Before continues a listing: the calls older than the cursor Calls
	// returned. Zero means from the newest call.
	Before Cursor
	// Limit is the most calls returned. Zero means DefaultCallsLimit; at
	// most MaxCallsLimit.
	Limit int
}

// CallSummary is one call as Calls lists it: postroom.CallSummary, so
// that httpapi serves it without importing this package. Its StartedAt is
// the call's enqueue, or EnqueueOptions.At when later.
type CallSummary = postroom.CallSummary

// Calls lists the calls of q.AccountID, newest first (by start, then id),
// each with its counts by status, in one query; next is the cursor of
// the page after this one, empty when there is none. An account without
// calls gives an empty list.
//
// The schema has no index on (account_id, started_at): the account's
// calls are selected (the (account_id, idempotency_key) index can serve
// that) and sorted by start. It is meant for people and scripts looking
// at a queue, not for a hot path.
func (o *Outbox) Calls(ctx context.Context, q CallsQuery) (calls []CallSummary, next Cursor, err error) {
	limit := q.Limit
	switch {
	case limit < 0:
		return nil, "", fmt.Errorf("outbox: Calls: CallsQuery.Limit is negative (%d)", limit)
	case limit == 0:
		limit = DefaultCallsLimit
	case limit > MaxCallsLimit:
		return nil, "", fmt.Errorf("outbox: Calls: CallsQuery.Limit is over %d (%d)", MaxCallsLimit, limit)
	}
	if reason := accountid.Check(q.AccountID); reason != "" {
		return nil, "", &postroom.ValidationError{Field: "account_id", Reason: reason}
	}
	beforeAt, beforeID, err := q.Before.decode()
	if err != nil {
		return nil, "", err
	}
	// The counts of final results by status, per call, in the same
	// query: reserved and deferred recipients are not final, as in Status.
	rows, err := o.db.Query(ctx, dialect(o.db, `SELECT c.id, c.operation, c.started_at, c.recipients, c.list,
			coalesce((SELECT jsonb_object_agg(s.status, s.n) FROM (
				SELECT u.status, count(*) AS n FROM postroom_outbox_results r, unnest(r.status) AS u(status)
				WHERE r.call_id = c.id AND u.status NOT IN ('', 'reserved', 'deferred')
				GROUP BY u.status) s), '{}'::jsonb)
		FROM postroom_outbox_calls c
		WHERE c.account_id = $1 AND ($2::timestamptz IS NULL OR (c.started_at, c.id) < ($2, $3))
		ORDER BY c.started_at DESC, c.id DESC
		LIMIT $4`, `SELECT c.id, c.operation, c.started_at, c.recipients, c.list,
			coalesce((SELECT json_group_object(s.status, s.n) FROM (
				SELECT u.value AS status, count(*) AS n FROM postroom_outbox_results r, json_each(r.status) AS u
				WHERE r.call_id = c.id AND u.value NOT IN ('', 'reserved', 'deferred')
				GROUP BY u.value) s), '{}')
		FROM postroom_outbox_calls c
		WHERE c.account_id = $1 AND ($2 IS NULL OR (c.started_at, c.id) < ($2, $3))
		ORDER BY c.started_at DESC, c.id DESC
		LIMIT $4`), q.AccountID, beforeAt, beforeID, limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("outbox: Calls: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s CallSummary
		var op int16
		var counts []byte
		if err := rows.Scan(&s.ID, &op, &s.StartedAt, &s.Recipients, &s.List, &counts); err != nil {
			return nil, "", fmt.Errorf("outbox: Calls: %w", err)
		}
		s.Operation = postroom.Operation(op).String()
		final := map[postroom.Status]int{}
		if err := json.Unmarshal(counts, &final); err != nil {
			return nil, "", fmt.Errorf("outbox: Calls: %w", err)
		}
		s.Counts = final
		n := 0
		for _, k := range final {
			n += k
		}
		switch {
		case n >= s.Recipients:
			s.State = postroom.CallDone
		case n == 0:
			s.State = postroom.CallQueued
		default:
			s.State = postroom.CallRunning
		}
		if n < s.Recipients {
			s.Counts[postroom.StatusQueued] += s.Recipients - n
		}
		calls = append(calls, s)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("outbox: Calls: %w", err)
	}
	if len(calls) > limit {
		calls = calls[:limit]
		last := calls[limit-1]
		next = encodeCursor(last.StartedAt, last.ID)
	}
	return calls, next, nil
}

// encodeCursor is the cursor after the call started at at with id id.
func encodeCursor(at time.Time, id string) Cursor {
	raw := strconv.FormatInt(at.UnixMicro(), 10) + ":" + id
	return Cursor(base64.RawURLEncoding.EncodeToString([]byte(raw)))
}

// decode returns the start and id the cursor holds; the zero cursor
// gives nil, the start of the list.
func (c Cursor) decode() (*time.Time, string, error) {
	if c == "" {
		return nil, "", nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(string(c))
	if err != nil {
		return nil, "", ErrBadCursor
	}
	us, id, ok := strings.Cut(string(raw), ":")
	n, err := strconv.ParseInt(us, 10, 64)
	if !ok || err != nil || id == "" {
		return nil, "", ErrBadCursor
	}
	at := time.UnixMicro(n)
	return &at, id, nil
}
