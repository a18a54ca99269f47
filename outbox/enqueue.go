package outbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/idempotency"
	"github.com/postroom/postroom/sqldb"
)

// EnqueueOptions are one call's settings for Enqueue. The zero value
// enqueues the call to start at once, with no idempotency key.
type EnqueueOptions struct {
	// IdempotencyKey, when not empty, makes Enqueue idempotent in the
	// call's account: a call enqueued (and committed) with the same key
	// and the same content (the same idempotency.HashCall, as package
	// idempotency compares calls) returns the first call's id and
	// enqueues nothing; with other content, ErrConflict. Empty means no
	// key.
	IdempotencyKey string
	// At, when later than now, is when the call's jobs become available:
	// send later. Zero means now.
	At time.Time
}

// Enqueue checks call as Mailer.Run would check it as operation op, then
// stores it and inserts its jobs in tx, and returns its id. Nothing is
// sent before tx commits; if tx rolls back, nothing is ever sent. tx is
// a transaction of the outbox's database: the application's own, wrapped
// (sqlitedb.WrapTx of its *sql.Tx, pgxdb.WrapTx of its pgx.Tx), or one of
// the DB's Begin; the jobs go in through River's driver of the engine,
// in the same transaction.
//
// A call refused as a whole gets the same errors as Send and SendTemplate
// (ErrUnauthorized, ErrNoRecipients, ErrTooManyRecipients,
// *postroom.ValidationError, joined with errors.Join) and leaves tx
// untouched. Recipients refused by the per-recipient checks (an invalid
// address, a duplicate) get their final invalid result at once; every
// other recipient gets one when a worker has sent its message.
//
// The call is stored as its JSON, once: its body (message, files, global
// params, and its key, which the workers check again through the
// Mailer's Options.Auth) in one row, with its list (CallStatus.List), and its
// recipients in one row per job of at most Options.JobSize. Params are sent as JSON gives them back
// (numbers as float64), as when the call comes over HTTP.
func (o *Outbox) Enqueue(ctx context.Context, tx sqldb.Tx, op postroom.Operation, call *postroom.Call, eo EnqueueOptions) (string, error) {
	if tx == nil {
		return "", errors.New("outbox: Enqueue: nil tx")
	}
	if err := o.river.accepts(tx); err != nil {
		return "", fmt.Errorf("outbox: Enqueue: %w", err)
	}
	checked, err := o.m.Validate(ctx, op, call)
	if err != nil {
		return "", err
	}
	return o.enqueue(ctx, tx, op, call, checked, eo)
}

// enqueue is Enqueue after its checks: checked is Validate's answer for
// call. HTTP's Enqueue validates before it begins its transaction, since
// on SQLite a Mailer's template store on the same file could not be read
// while the transaction holds the file's one connection.
func (o *Outbox) enqueue(ctx context.Context, tx sqldb.Tx, op postroom.Operation, call *postroom.Call, checked []postroom.Result, eo EnqueueOptions) (string, error) {
	body, chunks, err := o.encode(call)
	if err != nil {
		return "", err
	}
	// The hash is read only by a second use of the key: a call without
	// one stores none.
	hash := []byte{}
	if eo.IdempotencyKey != "" {
		h, err := idempotency.HashCall(op, call)
		if err != nil {
			return "", fmt.Errorf("outbox: Enqueue: %w", err)
		}
		hash = h[:]
	}
	id, err := newCallID()
	if err != nil {
		return "", err
	}
	var key *string
	if eo.IdempotencyKey != "" {
		key = &eo.IdempotencyKey
	}
	start := o.opts.Now()
	if eo.At.After(start) {
		start = eo.At
	}
	var got string
	err = tx.QueryRow(ctx, `INSERT INTO postroom_outbox_calls
		(id, account_id, idempotency_key, request_hash, operation, body, recipients, started_at, list)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (account_id, idempotency_key) DO NOTHING RETURNING id`,
		id, call.AccountID, key, hash, int16(op), body, len(call.Recipients), start, callList(call.Message.Headers)).Scan(&got)
	switch {
	case errors.Is(err, sqldb.ErrNoRows):
		// The key's call exists: the same call, or a conflict.
		var prior []byte
		if err := tx.QueryRow(ctx, `SELECT id, request_hash FROM postroom_outbox_calls
			WHERE account_id = $1 AND idempotency_key = $2`, call.AccountID, key).Scan(&got, &prior); err != nil {
			return "", fmt.Errorf("outbox: Enqueue: %w", notMigrated(ctx, tx, err))
		}
		if !bytes.Equal(prior, hash) {
			return "", ErrConflict
		}
		return got, nil
	case err != nil:
		return "", fmt.Errorf("outbox: Enqueue: %w", notMigrated(ctx, tx, err))
	}

	rows := make([][]any, len(chunks))
	jobs := make([]river.InsertManyParams, len(chunks))
	// One attempt more than MaxAttempts: the last only gives up (Worker).
	insertOpts := &river.InsertOpts{Queue: o.opts.Queue, ScheduledAt: eo.At, MaxAttempts: o.opts.MaxAttempts + 1}
	for k, c := range chunks {
		first := k * o.opts.JobSize
		n := min(o.opts.JobSize, len(call.Recipients)-first)
		rows[k] = []any{id, int32(first), int32(n), c}
		jobs[k] = river.InsertManyParams{Args: SendArgs{CallID: id, First: first, Count: n}, InsertOpts: insertOpts}
	}
	if _, err := tx.CopyFrom(ctx, "postroom_outbox_chunks",
		[]string{"call_id", "first", "count", "recipients"}, rows); err != nil {
		return "", fmt.Errorf("outbox: Enqueue: %w", notMigrated(ctx, tx, err))
	}
	invalid := map[int32]*entries{}
	for i, r := range checked {
		if r.Status != "" {
			first := int32(i - i%o.opts.JobSize)
			if invalid[first] == nil {
				invalid[first] = &entries{}
			}
			invalid[first].addResult(int32(i), r)
		}
	}
	if err := copyWrites(ctx, tx, id, invalid); err != nil {
		return "", fmt.Errorf("outbox: Enqueue: %w", notMigrated(ctx, tx, err))
	}
	if err := o.river.insertMany(ctx, tx, jobs); err != nil {
		return "", fmt.Errorf("outbox: Enqueue: %w", notMigrated(ctx, tx, err))
	}
	return id, nil
}

// encode returns call's body without its recipients, and its recipients
// in chunks of Options.JobSize, as JSON.
func (o *Outbox) encode(call *postroom.Call) (body []byte, chunks [][]byte, err error) {
	b := *call
	b.Recipients = nil
	if body, err = json.Marshal(&b); err != nil {
		return nil, nil, fmt.Errorf("outbox: Enqueue: %w", err)
	}
	for first := 0; first < len(call.Recipients); first += o.opts.JobSize {
		c, err := encodeRecipients(call.Recipients[first:min(first+o.opts.JobSize, len(call.Recipients))])
		if err != nil {
			return nil, nil, fmt.Errorf("outbox: Enqueue: recipients: %w", err)
		}
		chunks = append(chunks, c)
	}
	return body, chunks, nil
}

// encodeRecipients returns rs as json.Marshal does: each recipient's
// MarshalJSON, joined here, since json.Marshal would check each one's
// output again, which costs more than writing it.
func encodeRecipients(rs []postroom.Recipient) ([]byte, error) {
	c := make([]byte, 0, 64*len(rs))
	c = append(c, '[')
	for i := range rs {
		if i > 0 {
			c = append(c, ',')
		}
		b, err := rs[i].MarshalJSON()
		if err != nil {
			return nil, err
		}
		c = append(c, b...)
	}
	return append(c, ']'), nil
}

// callList is the list id of the messages of a call that Validate
// accepted, as postroom.Prepared.List gives it: the id of its List-Id
// header (RFC 2919) lower-cased, or "" for a transactional call. Validate
// refuses a second List-Id and one that does not end in <id>, so the id
// is what the last angle brackets hold. The Prepared that Validate made
// is not the caller's, and preparing the call again for its List would
// check every recipient a second time.
func callList(headers []postroom.Header) string {
	for _, h := range headers {
		if !strings.EqualFold(h.Name, "List-Id") {
			continue
		}
		v := strings.TrimSpace(h.Value)
		if open := strings.LastIndexByte(v, '<'); open >= 0 && strings.HasSuffix(v, ">") {
			return strings.ToLower(v[open+1 : len(v)-1])
		}
	}
	return ""
}

// newCallID returns a random call id: 32 lowercase hex characters.
func newCallID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("outbox: call id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
