package outbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/callhash"
	"github.com/postroom/postroom/internal/calljson"
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
// call. AccountCalls.Enqueue validates before it begins its transaction, since
// on SQLite a Mailer's template store on the same file could not be read
// while the transaction holds the file's one connection.
func (o *Outbox) enqueue(ctx context.Context, tx sqldb.Tx, op postroom.Operation, call *postroom.Call, checked []postroom.Result, eo EnqueueOptions) (string, error) {
	whole, body, chunks, err := o.encode(call)
	if err != nil {
		return "", err
	}
	// The hash is read only by a second use of the key: a call without
	// one stores none.
	hash := []byte{}
	if eo.IdempotencyKey != "" {
		h := callhash.OfJSON(op, whole)
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
	o.m.Queued(ctx, id, op, call, checked) // each recipient's queued event (message activity)
	return id, nil
}

// encode encodes call once (Call.MarshalJSON, as json.Marshal writes it
// but without encoding/json checking it again) and cuts from it body, the
// call with its recipients null, and its recipients in chunks of
// Options.JobSize, each a JSON array of those recipients; whole is the
// call's JSON, for its hash (callhash.OfJSON).
func (o *Outbox) encode(call *postroom.Call) (whole, body []byte, chunks [][]byte, err error) {
	whole, err = call.MarshalJSON()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("outbox: Enqueue: %w", err)
	}
	start, end, elems, ok := recipientsIn(whole)
	if !ok || len(elems) != len(call.Recipients) {
		return nil, nil, nil, errors.New("outbox: Enqueue: the call's JSON has not its recipients")
	}
	body = slices.Concat(whole[:start], []byte("null"), whole[end:])
	for first := 0; first < len(elems); first += o.opts.JobSize {
		last := elems[min(first+o.opts.JobSize, len(elems))-1]
		c := make([]byte, 0, last[1]-elems[first][0]+2)
		c = append(append(append(c, '['), whole[elems[first][0]:last[1]]...), ']')
		chunks = append(chunks, c)
	}
	return whole, body, chunks, nil
}

// recipientsIn finds the recipients of b, a call's JSON: the value of
// its top-level key "recipients" is b[start:end], and its elements are
// b[e[0]:e[1]] for each e of elems (none for null).
func recipientsIn(b []byte) (start, end int, elems [][2]int, ok bool) {
	i := calljson.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return 0, 0, nil, false
	}
	i = calljson.SkipSpace(b, i+1)
	for more := i < len(b) && b[i] != '}'; more; {
		key, v, ok := calljson.Key(b, i)
		if !ok {
			return 0, 0, nil, false
		}
		next, ok := calljson.SkipValue(b, v)
		if !ok {
			return 0, 0, nil, false
		}
		if string(key) == "recipients" {
			return v, next, arrayElements(b, v), true
		}
		if i, more, ok = calljson.After(b, next, '}'); !ok {
			return 0, 0, nil, false
		}
	}
	return 0, 0, nil, false
}

// arrayElements returns the bounds of the elements of the array at b[i]
// (none for anything else: null), which SkipValue has read to its end.
func arrayElements(b []byte, i int) [][2]int {
	if b[i] != '[' {
		return nil
	}
	var elems [][2]int
	i = calljson.SkipSpace(b, i+1)
	for more := i < len(b) && b[i] != ']'; more; {
		end, ok := calljson.SkipValue(b, i)
		if !ok {
			return nil
		}
		elems = append(elems, [2]int{i, end})
		if i, more, ok = calljson.After(b, end, ']'); !ok {
			return nil
		}
	}
	return elems
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
