package main

// What came back after a done call's messages left (CallStatus.Later),
// read from the events' table and shown by call.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/internal/replytext"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

// undefinedTable is PostgreSQL's SQLSTATE for a table that does not
// exist (42P01 undefined_table).
const undefinedTable = "42P01"

// laterLog is the outbox's Options.Events: the database's event log
// (events.SQL), which an application's events.Recorder and package
// inbound fill. A database without it (an application that records no
// events migrates only the outbox) has no later events to show, which
// is not the command's failure: After then finds none and sets missing.
type laterLog struct {
	log     *events.SQL
	missing atomic.Bool
}

// newLaterLog returns the event log of pool's database.
func newLaterLog(pool *pgxpool.Pool) (*laterLog, error) {
	log, err := events.NewSQL(pgxdb.New(pool), events.SQLOptions{})
	if err != nil {
		return nil, err
	}
	return &laterLog{log: log}, nil
}

// After is events.SQL's, but finds nothing, and sets l.missing, when the
// database has no events' table.
func (l *laterLog) After(ctx context.Context, sendIDs []string) (map[string]postroom.Event, error) {
	found, err := l.log.After(ctx, sendIDs)
	if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == undefinedTable {
		l.missing.Store(true)
		return nil, nil
	}
	return found, err
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
