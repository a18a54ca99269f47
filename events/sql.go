package events

import (
	"github.com/postroom/postroom/option"

	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/sendid"
	"github.com/postroom/postroom/sqldb"
)

// DefaultListLimit and MaxListLimit bound SQL.List's page.
const (
	DefaultListLimit = 100
	MaxListLimit     = 10_000
)

// DefaultSQLRetention is how long an SQL store keeps its events when
// SQLOptions.Retention is zero.
const DefaultSQLRetention = 30 * 24 * time.Hour

// SQLOptions configure an SQL store.
type SQLOptions struct {
	// Retention is how long events are kept: Rotate drops the days (UTC)
	// that ended longer ago. Zero means DefaultSQLRetention (30 days).
	Retention time.Duration

	// SendWindow is how long a send event proves a later bounce: Lookup
	// ignores older ones. Zero means DefaultRetention (7 days).
	SendWindow time.Duration

	// KeepBodies is how long the rendered message of each send handed to
	// KeepBody (see KeepBodies) is kept, in postroom_event_bodies: Rotate
	// deletes the older ones. Zero, the default, keeps none (and Rotate
	// deletes any kept before). See the package documentation for its
	// size.
	KeepBodies time.Duration

	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// SQL is the event log in a database behind the sqldb seam (PostgreSQL
// or SQLite), in the table postroom_events that Migrate creates. It is
// safe for concurrent use, and instances on one PostgreSQL database share
// the log. It never starts a goroutine.
type SQL struct {
	db   sqldb.DB
	q    *queries
	opts SQLOptions
	bufs sync.Pool // of *recordBuf
}

// recordBuf holds the rows of a Record, kept for the next: a call's
// batches reuse them rather than allocate a row of values per event.
type recordBuf struct {
	flat []any
	rows [][]any
}

// take returns b's arrays for events rows of n values each.
func (b *recordBuf) take(n, events int) ([]any, [][]any) {
	if cap(b.flat) < n*events {
		b.flat, b.rows = make([]any, n*events), make([][]any, events)
	}
	return b.flat[:n*events], b.rows[:events]
}

// ErrBadCursor is returned by List for an after cursor it did not make.
var ErrBadCursor = errors.New("events: bad cursor")

// NewSQL returns the log in db's database, which Migrate must have
// brought up to date, or an error naming the field of opts that is out of
// range. db is the application's; SQL never closes it.
func NewSQL(db sqldb.DB, opts SQLOptions) (*SQL, error) {
	if db == nil {
		return nil, fmt.Errorf("events: NewSQL: nil db")
	}
	q, err := queriesOf(db.Engine())
	if err != nil {
		return nil, fmt.Errorf("events: NewSQL: %w", err)
	}
	const op = "events.NewSQL"
	for _, err := range []error{
		option.Default(op, "SQLOptions.Retention", &opts.Retention, DefaultSQLRetention),
		option.Default(op, "SQLOptions.SendWindow", &opts.SendWindow, DefaultRetention),
		option.Default(op, "SQLOptions.KeepBodies", &opts.KeepBodies, 0),
	} {
		if err != nil {
			return nil, err
		}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &SQL{db: db, q: q, opts: opts}, nil
}

// Record writes evs in one CopyFrom (PostgreSQL's COPY, one round trip
// whatever their number; SQLite's multi-row INSERTs in one transaction).
// An event's zero At is stamped with the store's clock. It writes nothing
// when evs is empty. Record does not keep evs.
func (s *SQL) Record(ctx context.Context, evs []postroom.Event) error {
	if len(evs) == 0 {
		return nil
	}
	now := s.opts.Now()
	// A batch's events mostly share their account, type, list and call
	// (a call's sends): each is boxed once, not once per row.
	var account, typ, list, call, sender, html, text box
	n := len(recordColumns)
	buf, _ := s.bufs.Get().(*recordBuf)
	if buf == nil {
		buf = new(recordBuf)
	}
	flat, rows := buf.take(n, len(evs))
	defer func() {
		clear(flat) // the strings of evs are not kept
		s.bufs.Put(buf)
	}()
	for i := range evs {
		e := &evs[i]
		at := e.At
		if at.IsZero() {
			at = now
		}
		r := flat[i*n : (i+1)*n : (i+1)*n]
		r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8] = account.of(e.AccountID), typ.of(string(e.Type)), strings.ToLower(e.SendID), e.Email, e.Reason, e.Status, e.Diagnostic, list.of(e.List), at
		r[9], r[10], r[11], r[12], r[13] = call.of(e.CallID), sender.of(e.From), e.Subject, html.of(e.HTMLTemplateID), text.of(e.TextTemplateID)
		rows[i] = r
	}
	if _, err := s.db.CopyFrom(ctx, "postroom_events", recordColumns, rows); err != nil {
		return fmt.Errorf("events: record %d events: %w", len(evs), err)
	}
	return nil
}

// recordColumns are the columns Record writes, in its rows' order.
var recordColumns = []string{"account_id", "event", "send_id", "email", "reason", "status", "diagnostic", "list", "at",
	"call_id", "sender", "subject", "html_template", "text_template"}

// eventColumns are the columns of an event that eventDest scans, in its
// order (the account aside: a query often knows it).
const eventColumns = `event, send_id, email, reason, status, diagnostic, list, at, call_id, sender, subject, html_template, text_template`

// eventDest is where a row's eventColumns are scanned: e's fields, its
// type through a scanner of its own.
func eventDest(e *postroom.Event) []any {
	return []any{(*eventType)(&e.Type), &e.SendID, &e.Email, &e.Reason, &e.Status, &e.Diagnostic, &e.List, &e.At,
		&e.CallID, &e.From, &e.Subject, &e.HTMLTemplateID, &e.TextTemplateID}
}

// eventType scans a text column into a postroom.EventType.
type eventType postroom.EventType

// Scan implements sql.Scanner.
func (t *eventType) Scan(src any) error {
	switch s := src.(type) {
	case string:
		*t = eventType(s)
	case []byte:
		*t = eventType(s)
	default:
		return fmt.Errorf("events: an event type of %T", src)
	}
	return nil
}

// box is the interface value of the last string it boxed: of returns
// the same value, allocating nothing, while the string is the same.
type box struct {
	s string
	v any
}

func (b *box) of(s string) any {
	if b.v == nil || b.s != s {
		b.s, b.v = s, s
	}
	return b.v
}

// List returns up to limit events of accountID recorded after the cursor
// after ("" for the beginning), oldest first, and the cursor to pass as
// after to read on: that of the last event returned, or after itself when
// none is. limit zero means DefaultListLimit; more than MaxListLimit is
// cut to it.
//
// The log is append-only and List never skips an event. On PostgreSQL it
// shows only the events whose batch committed before every transaction
// still writing began, so a batch that commits late is read after the
// ones before it (pg_snapshot_xmin); an event may therefore show a moment
// after it was written. On SQLite, whose writes commit one after the
// other in id order, it shows every committed event. A cursor List did
// not make is ErrBadCursor.
func (s *SQL) List(ctx context.Context, accountID, after string, limit int) ([]postroom.Event, string, error) {
	if limit <= 0 {
		limit = DefaultListLimit
	}
	limit = min(limit, MaxListLimit)
	xid, id, err := parseCursor(after)
	if err != nil {
		return nil, "", err
	}
	rows, err := s.db.Query(ctx, s.q.list, accountID, strconv.FormatUint(xid, 10), id, limit)
	if err != nil {
		return nil, "", fmt.Errorf("events: list: %w", err)
	}
	defer rows.Close()
	var evs []postroom.Event
	next := after
	for rows.Next() {
		var (
			xidText string
			e       = postroom.Event{AccountID: accountID}
		)
		if err := rows.Scan(append([]any{&xidText, &id}, eventDest(&e)...)...); err != nil {
			return nil, "", fmt.Errorf("events: list: %w", err)
		}
		evs = append(evs, e)
		next = xidText + "." + strconv.FormatInt(id, 10)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("events: list: %w", err)
	}
	return evs, next, nil
}

// parseCursor reads a cursor "XID.ID"; "" is the beginning.
func parseCursor(c string) (xid uint64, id int64, err error) {
	if c == "" {
		return 0, 0, nil
	}
	x, i, ok := strings.Cut(c, ".")
	if ok {
		xid, err = strconv.ParseUint(x, 10, 64)
		if err == nil {
			id, err = strconv.ParseInt(i, 10, 64)
		}
	}
	if !ok || err != nil || id < 0 {
		return 0, 0, fmt.Errorf("%w: %q", ErrBadCursor, c)
	}
	return xid, id, nil
}

// Lookup returns the send event of the message whose send id is id, when one
// was recorded no longer than SendWindow ago; see Sends.
func (s *SQL) Lookup(ctx context.Context, id string) (Send, bool, error) {
	id = sendid.Normalize(id)
	if id == "" {
		return Send{}, false, nil
	}
	snd := Send{ID: id}
	err := s.db.QueryRow(ctx, `
		SELECT account_id, email, list, at FROM postroom_events
		WHERE send_id = $1 AND event = 'send' AND at >= $2
		ORDER BY id DESC LIMIT 1`, id, s.opts.Now().Add(-s.opts.SendWindow)).Scan(&snd.AccountID, &snd.Email, &snd.List, &snd.At)
	if errors.Is(err, sqldb.ErrNoRows) {
		return Send{}, false, nil
	}
	if err != nil {
		return Send{}, false, fmt.Errorf("events: look up send %s: %w", id, err)
	}
	return snd, true, nil
}

// After returns, for each of sendIDs that has one, the latest event
// recorded about it after it was sent (hard_bounce, soft_bounce, spam,
// unsub, deferral; not send), in one query whatever their number: what a
// queued call's status shows beside each recipient's result. Ids that are
// not send ids are ignored.
func (s *SQL) After(ctx context.Context, sendIDs []string) (map[string]postroom.Event, error) {
	ids := make([]string, 0, len(sendIDs))
	for _, id := range sendIDs {
		if id = sendid.Normalize(id); id != "" {
			ids = append(ids, id)
		}
	}
	out := make(map[string]postroom.Event)
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.Query(ctx, s.q.after, ids)
	if err != nil {
		return nil, fmt.Errorf("events: after: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e postroom.Event
		if err := rows.Scan(append([]any{&e.AccountID}, eventDest(&e)...)...); err != nil {
			return nil, fmt.Errorf("events: after: %w", err)
		}
		out[e.SendID] = e
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events: after: %w", err)
	}
	return out, nil
}

// Prune deletes the events older than before, row by row, and returns
// how many it deleted. Rotate drops whole days instead, which is what a
// large log needs; Prune is for a time finer than a day.
func (s *SQL) Prune(ctx context.Context, before time.Time) (int64, error) {
	n, err := s.db.Exec(ctx, `DELETE FROM postroom_events WHERE at < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("events: prune: %w", err)
	}
	return n, nil
}
