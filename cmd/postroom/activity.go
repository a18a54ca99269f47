package main

// What happened to a message: activity ADDRESS|SEND_ID.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/internal/replytext"
	"github.com/postroom/postroom/internal/sendid"
)

func runActivity(ctx context.Context, e *env, args []string) error {
	var c common
	q := events.Query{Limit: 20}
	var state string
	fs := newFlags(e, "activity", "ADDRESS|SEND_ID", &c)
	fs.StringVar(&q.AccountID, "account", "", "the account whose messages are shown (required)")
	fs.IntVar(&q.Limit, "limit", q.Limit, "the most messages shown for an address")
	fs.StringVar(&state, "state", "", "only the messages in this state (queued, sent, deferred, rejected, bounced, soft-bounced, spam, unsub)")
	fs.StringVar(&q.Cursor, "before", "", "continue a listing: the cursor that the previous page printed")
	rest, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	if q.AccountID == "" {
		return usagef("-account is required")
	}
	if q.Limit <= 0 {
		return usagef("-limit must be positive")
	}
	q.State = events.State(state)
	db, err := c.open(ctx, e, eventTable)
	if err != nil {
		return err
	}
	defer db.Close()
	store, err := events.NewSQL(db.DB, events.SQLOptions{})
	if err != nil {
		return err
	}
	if id := sendid.Normalize(rest[0]); id != "" {
		m, ok, err := store.Info(ctx, q.AccountID, id)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("no message %s in account %s", id, q.AccountID)
		}
		if c.json {
			return printJSON(e.stdout, m)
		}
		printMessage(e.stdout, m)
		return nil
	}
	q.Email = rest[0]
	msgs, next, err := store.Search(ctx, q)
	if errors.Is(err, events.ErrBadQuery) || errors.Is(err, events.ErrBadCursor) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	if c.json {
		if msgs == nil {
			msgs = []events.Message{}
		}
		return printJSON(e.stdout, struct {
			Messages []events.Message `json:"messages"`
			Next     string           `json:"next,omitempty"`
		}{msgs, next})
	}
	if len(msgs) == 0 {
		fmt.Fprintf(e.stdout, "no messages to %s in account %s\n", replytext.Line(q.Email), q.AccountID)
	}
	for i, m := range msgs {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		printMessage(e.stdout, m)
	}
	if next != "" {
		fmt.Fprintf(e.stdout, "\nmore: postroom activity -account %s -before %s %s\n", quote(q.AccountID), next, quote(q.Email))
	}
	return nil
}

// printMessage writes m: a line for the message (send id, or "(no send
// id)" for a message never made; address; state; when; list), a line for
// its call (call id, sender, subject, templates: those it has), then one
// indented line per event of its timeline. The texts that came from
// other servers or from the call are made one line of printable text.
func printMessage(w io.Writer, m events.Message) {
	id := m.SendID
	if id == "" {
		id = "(no send id)"
	}
	fmt.Fprintf(w, "%s  %s  %s  %s%s\n", id, replytext.Line(m.Email), m.State, m.Created.UTC().Format(time.RFC3339), listNote(m.List))
	var call []string
	for _, f := range [][2]string{{"call", m.CallID}, {"from", m.From}, {"subject", m.Subject}, {"templates", strings.Join(m.Templates, ", ")}} {
		if f[1] != "" {
			call = append(call, f[0]+" "+replytext.Line(f[1]))
		}
	}
	if len(call) > 0 {
		fmt.Fprintf(w, "  %s\n", strings.Join(call, "; "))
	}
	for _, ev := range m.Timeline {
		parts := []string{ev.At.UTC().Format(time.RFC3339), string(ev.Type)}
		for _, s := range []string{ev.Reason, ev.Status, ev.Diagnostic} {
			if s != "" {
				parts = append(parts, replytext.Line(s))
			}
		}
		fmt.Fprintf(w, "  %s\n", strings.Join(parts, "  "))
	}
}
