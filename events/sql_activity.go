package events

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/sendid"
)

// Search returns the messages that q selects, newest first; see Activity.
// A message is found by its first event (a send, a deferral or a reject:
// Created, Email and List are that event's); its timeline is every event
// of its send id in the account, oldest first. A search by address or by
// send id reads only that address's or message's rows (the indexes of
// schema version 3); a search by list, state or time alone reads the
// account's messages newest first until the page is full.
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
		where = []string{"e.account_id = $1", "e.event IN ('send', 'deferral', 'reject')"}
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
		where = append(where, "(e.at, e.id) < ("+arg(cur.at)+"::timestamptz, "+arg(cur.n)+"::bigint)")
	}
	// The first of its message's events: no send or deferral of the same
	// send id before it.
	where = append(where, `(e.send_id = '' OR NOT EXISTS (
		SELECT 1 FROM postroom_events p
		WHERE p.send_id = e.send_id AND p.account_id = e.account_id AND p.event IN ('send', 'deferral') AND (p.at, p.id) < (e.at, e.id)))`)
	if q.State != "" {
		where = append(where, "COALESCE(l.event, e.event) = ANY("+arg(eventsOf(q.State))+")")
	}
	sql := `
		SELECT e.id, e.event, e.send_id, e.email, e.reason, e.status, e.diagnostic, e.list, e.at, COALESCE(l.event, e.event)
		FROM postroom_events e
		LEFT JOIN LATERAL (
			SELECT l.event FROM postroom_events l
			WHERE e.send_id <> '' AND l.send_id = e.send_id AND l.account_id = e.account_id
			ORDER BY l.at DESC, l.id DESC LIMIT 1) l ON true
		WHERE ` + strings.Join(where, " AND ") + `
		ORDER BY e.at DESC, e.id DESC
		LIMIT ` + arg(q.Limit+1)
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, "", fmt.Errorf("events: search: %w", err)
	}
	var (
		msgs []Message
		rids []int64
	)
	for rows.Next() {
		var (
			rid         int64
			first       postroom.Event
			typ, latest string
		)
		if err := rows.Scan(&rid, &typ, &first.SendID, &first.Email, &first.Reason, &first.Status, &first.Diagnostic, &first.List, &first.At, &latest); err != nil {
			rows.Close()
			return nil, "", fmt.Errorf("events: search: %w", err)
		}
		first.Type, first.AccountID = postroom.EventType(typ), q.AccountID
		g := Message{SendID: first.SendID, AccountID: q.AccountID, Email: first.Email, List: first.List, State: stateOf(postroom.EventType(latest)), Created: first.At}
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
	return msgs, next, nil
}

// timelines fills in the timeline of each of msgs that has a send id, in
// one query.
func (s *SQL) timelines(ctx context.Context, accountID string, msgs []Message) error {
	at := make(map[string]int, len(msgs))
	ids := make([]string, 0, len(msgs))
	for i, g := range msgs {
		if g.SendID != "" {
			at[g.SendID] = i
			ids = append(ids, g.SendID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := s.pool.Query(ctx, `
		SELECT send_id, event, email, reason, status, diagnostic, list, at
		FROM postroom_events
		WHERE send_id = ANY($1) AND account_id = $2
		ORDER BY send_id, at, id`, ids, accountID)
	if err != nil {
		return fmt.Errorf("events: search: timelines: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		e := postroom.Event{AccountID: accountID}
		var typ string
		if err := rows.Scan(&e.SendID, &typ, &e.Email, &e.Reason, &e.Status, &e.Diagnostic, &e.List, &e.At); err != nil {
			return fmt.Errorf("events: search: timelines: %w", err)
		}
		e.Type = postroom.EventType(typ)
		g := &msgs[at[e.SendID]]
		g.Timeline = append(g.Timeline, e)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("events: search: timelines: %w", err)
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
