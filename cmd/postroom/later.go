package main

// What came back after a done call's messages left (CallStatus.Later),
// read from the events' table and shown by call.

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/internal/replytext"
)

// laterLog is the outbox's Options.Events: the database's event log
// (events.SQL), which an application's events.Recorder and package
// inbound fill. A database without it (an application that records no
// events migrates only the outbox) has no later events to show, which
// is not the command's failure: After then finds none, and missing is
// set.
type laterLog struct {
	log     *events.SQL // nil when missing
	missing atomic.Bool
}

// newLaterLog returns the event log of db, or finds that it has none.
func newLaterLog(ctx context.Context, db *database) (*laterLog, error) {
	l := &laterLog{}
	missing, err := missingTables(ctx, db, eventTable)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		l.missing.Store(true)
		return l, nil
	}
	if l.log, err = events.NewSQL(db.DB, events.SQLOptions{}); err != nil {
		return nil, err
	}
	return l, nil
}

// After is events.SQL's, or finds nothing when the database has no
// event log.
func (l *laterLog) After(ctx context.Context, sendIDs []string) (map[string]postroom.Event, error) {
	if l.log == nil {
		return nil, nil
	}
	return l.log.After(ctx, sendIDs)
}

// printLater writes, as text, what came back after a done call's
// messages left: at most show events, each as its recipient's index in
// the call, address, event, reason and status, time, and the remote
// server's diagnostic. The texts come from the reports received, so each
// line is made one line of printable text (replytext.Line, which cuts it
// at 512 bytes): no control character reaches the terminal.
func printLater(w io.Writer, s *postroom.CallStatus, missing bool, show int) {
	if missing {
		fmt.Fprintln(w, "later: no event log in this database (postroom migrate creates it; the application's events.Recorder and package inbound fill it)")
		return
	}
	if len(s.Later) == 0 {
		return
	}
	index := make(map[string]int, len(s.Results))
	for i, r := range s.Results {
		if r.SendID != "" {
			index[r.SendID] = i
		}
	}
	fmt.Fprintf(w, "later (%d):\n", len(s.Later))
	for k, e := range s.Later {
		if k == show {
			fmt.Fprintf(w, "  ... and %d more (-later N, or -json)\n", len(s.Later)-show)
			break
		}
		var b strings.Builder
		if i, ok := index[e.SendID]; ok {
			fmt.Fprintf(&b, "%d ", i)
		}
		fmt.Fprintf(&b, "%s %s", e.Email, e.Type)
		if e.Reason != "" || e.Status != "" {
			b.WriteString(":")
			for _, v := range []string{e.Reason, e.Status} {
				if v != "" {
					b.WriteString(" " + v)
				}
			}
		}
		b.WriteString("; at " + e.At.UTC().Format(time.RFC3339))
		if e.Diagnostic != "" {
			b.WriteString("; " + e.Diagnostic) // last: what replytext.Line cuts
		}
		fmt.Fprintln(w, "  "+replytext.Line(b.String()))
	}
}
