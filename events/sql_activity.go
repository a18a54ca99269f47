package events

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/sendid"
	"github.com/postroom/postroom/sqldb"
)

// Search returns the messages that q selects, newest first; see Activity.
// A message is found by its first event (a send, a deferral or a reject,
// or a queued event not tried yet: Created, Email and List are that
// event's); its timeline is its queued event, when it has one, then every
// event of its send id in the account, oldest first. A search by address,
// send id or call id reads only that address's, message's or call's rows
// (one index probe per day partition on PostgreSQL); a search by list,
// state or time alone reads the account's messages newest first until the
// page is full.
//
// The attempts of one send id (its deferrals and its send, made by one
// run of a call) are taken to lie within a day: an attempt made later
// than that shows as a message of its own. The events of a message are
// no older than its first.
//
// Search sees every committed event: unlike List, it is not a feed, and a
// batch that commits late may show on a page already read. A Query it
// refuses is ErrBadQuery, a cursor it did not make ErrBadCursor.
func (s *SQL) Search(ctx context.Context, q Query) ([]Message, string, error) {
	q, err := q.check()
	if err != nil {
		return nil, "", err
	}
	cur, paged, err := parseSearchCursor(q.Cursor)
	if err != nil {
		return nil, "", err
	}
	var (
		where = []string{"e.account_id = $1", "e.event IN ('send', 'deferral', 'reject', 'queued')"}
		args  = []any{q.AccountID}
	)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if q.Email != "" {
		where = append(where, "lower(e.email) = lower("+arg(q.Email)+")")
	}
	if q.SendID != "" {
		id := sendid.Normalize(q.SendID)
		if id == "" {
			return nil, "", nil
		}
		where = append(where, "e.send_id = "+arg(id))
	}
	if q.CallID != "" {
		// call_id <> '' written out: the call index is partial, and a
		// generic plan cannot prove it from the argument.
		where = append(where, "e.call_id = "+arg(q.CallID)+" AND e.call_id <> ''")
	}
	if q.List != "" {
		where = append(where, "e.list = lower("+arg(q.List)+")")
	}
	if !q.From.IsZero() {
		where = append(where, "e.at >= "+arg(q.From))
	}
	if !q.To.IsZero() {
		where = append(where, "e.at < "+arg(q.To))
	}
	if paged {
		where = append(where, "(e.at, e.id) < ("+fmt.Sprintf(s.q.time, arg(cur.at))+", "+arg(cur.n)+")")
	}
	// The first of its message's events: no send or deferral of the same
	// send id before it; a queued event, while no other event of its call
	// and address is recorded.
	where = append(where, `CASE WHEN e.event = 'queued' THEN NOT EXISTS (
		SELECT 1 FROM postroom_events p
		WHERE p.account_id = e.account_id AND lower(p.email) = lower(e.email) AND p.call_id = e.call_id AND p.event <> 'queued')
	ELSE e.send_id = '' OR NOT EXISTS (
		SELECT 1 FROM postroom_events p
		WHERE p.send_id = e.send_id AND p.account_id = e.account_id AND p.event IN ('send', 'deferral') AND (p.at, p.id) < (e.at, e.id)
		  AND p.at <= e.at AND p.at > `+fmt.Sprintf(s.q.dayBefore, "e.at")+`) END`)
	// The latest event of the message (its state): PostgreSQL joins it
	// LATERAL, SQLite reads it in a subquery of the row.
	const latest = `SELECT l.event FROM postroom_events l
			WHERE e.send_id <> '' AND l.send_id = e.send_id AND l.account_id = e.account_id AND l.at >= e.at
			ORDER BY l.at DESC, l.id DESC LIMIT 1`
	var sql string
	if s.q.engine == sqldb.Postgres {
		if q.State != "" {
			where = append(where, "COALESCE(l.event, e.event)"+fmt.Sprintf(s.q.in, arg(eventsOf(q.State))))
		}
		sql = `
		SELECT e.id, ` + prefixed("e.", eventColumns) + `, COALESCE(l.event, e.event)
		FROM postroom_events e
		LEFT JOIN LATERAL (` + latest + `) l ON true
		WHERE ` + strings.Join(where, " AND ") + `
		ORDER BY e.at DESC, e.id DESC
		LIMIT ` + arg(q.Limit+1)
	} else {
		if q.State != "" {
			where = append(where, "latest"+fmt.Sprintf(s.q.in, arg(eventsOf(q.State))))
		}
		sql = `
		SELECT e.id, ` + prefixed("e.", eventColumns) + `, COALESCE((` + latest + `), e.event) AS latest
		FROM postroom_events e
		WHERE ` + strings.Join(where, " AND ") + `
		ORDER BY e.at DESC, e.id DESC
		LIMIT ` + arg(q.Limit+1)
	}
	rows, err := s.db.Query(ctx, sql, args...)
	if err != nil {
		return nil, "", fmt.Errorf("events: search: %w", err)
	}
	var (
		msgs []Message
		rids []int64
	)
	for rows.Next() {
		var (
			rid    int64
			first  = postroom.Event{AccountID: q.AccountID}
			latest string
		)
		if err := rows.Scan(append(append([]any{&rid}, eventDest(&first)...), &latest)...); err != nil {
			rows.Close()
			return nil, "", fmt.Errorf("events: search: %w", err)
		}
		// CallID is the first event's until describe: timelines reads it.
		g := Message{SendID: first.SendID, AccountID: q.AccountID, CallID: first.CallID, Email: first.Email, List: first.List, State: stateOf(postroom.EventType(latest)), Created: first.At}
		if first.SendID == "" {
			g.Timeline = []postroom.Event{first}
		}
		msgs = append(msgs, g)
		rids = append(rids, rid)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("events: search: %w", err)
	}
	next := ""
	if len(msgs) > q.Limit {
		msgs, rids = msgs[:q.Limit], rids[:q.Limit]
		next = searchCursor{at: msgs[q.Limit-1].Created, n: rids[q.Limit-1]}.String()
	}
	if err := s.timelines(ctx, q.AccountID, msgs); err != nil {
		return nil, "", err
	}
	for i := range msgs {
		msgs[i].describe()
	}
	return msgs, next, nil
}

// isQueued reports whether g is a queued message: its timeline is its
// queued event.
func isQueued(g Message) bool {
	return g.SendID == "" && len(g.Timeline) > 0 && g.Timeline[0].Type == postroom.EventQueued
}

// prefixed is the comma-separated columns cols, each prefixed with p.
func prefixed(p, cols string) string {
	return p + strings.ReplaceAll(cols, ", ", ", "+p)
}

// timelines fills in the timeline of each of msgs that has a send id, and
// puts the queued event of each message that was queued (the same
// account, call and address) at the head of its timeline, in one query.
func (s *SQL) timelines(ctx context.Context, accountID string, msgs []Message) error {
	at := make(map[string]int, len(msgs))
	var ids, calls, emails []string
	// A message's events are no older than its first (Created), which
	// keeps the read to the partitions of the page's days.
	var oldest time.Time
	for i, g := range msgs {
		if g.SendID != "" && (oldest.IsZero() || g.Created.Before(oldest)) {
			oldest = g.Created
		}
		if g.SendID != "" {
			at[g.SendID] = i
			ids = append(ids, g.SendID)
		}
		if g.CallID != "" && !isQueued(g) {
			calls = append(calls, g.CallID)
			emails = append(emails, strings.ToLower(g.Email))
		}
	}
	if len(ids) == 0 && len(calls) == 0 {
		return nil
	}
	rows, err := s.db.Query(ctx, `
		SELECT `+eventColumns+`
		FROM postroom_events
		WHERE account_id = $2 AND (send_id`+fmt.Sprintf(s.q.in, "$1")+` AND at >= $5
			OR event = 'queued' AND call_id`+fmt.Sprintf(s.q.in, "$3")+` AND lower(email)`+fmt.Sprintf(s.q.in, "$4")+`)
		ORDER BY send_id, at, id`, ids, accountID, calls, emails, oldest)
	if err != nil {
		return fmt.Errorf("events: search: timelines: %w", err)
	}
	defer rows.Close()
	var queued []postroom.Event
	for rows.Next() {
		e := postroom.Event{AccountID: accountID}
		if err := rows.Scan(eventDest(&e)...); err != nil {
			return fmt.Errorf("events: search: timelines: %w", err)
		}
		if e.SendID == "" {
			queued = append(queued, e)
			continue
		}
		g := &msgs[at[e.SendID]]
		g.Timeline = append(g.Timeline, e)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("events: search: timelines: %w", err)
	}
	for i := range msgs {
		g := &msgs[i]
		if g.CallID == "" || isQueued(*g) {
			continue
		}
		for _, q := range queued {
			if q.CallID == g.CallID && strings.EqualFold(q.Email, g.Email) {
				g.Timeline = slices.Insert(g.Timeline, 0, q)
				break
			}
		}
	}
	return nil
}

// Info returns the message of accountID whose send id is sendID (either
// letter case), and false when the account has none; see Activity.
func (s *SQL) Info(ctx context.Context, accountID, sendID string) (Message, bool, error) {
	if accountID == "" || sendid.Normalize(sendID) == "" {
		return Message{}, false, nil
	}
	msgs, _, err := s.Search(ctx, Query{AccountID: accountID, SendID: sendID, Limit: 1})
	if err != nil || len(msgs) == 0 {
		return Message{}, false, err
	}
	return msgs[0], true, nil
}
