package main

// The outbox's calls: list, show (and follow), cancel, retry.

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/schollz/progressbar/v3"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/replytext"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/transport"
)

// openOutbox opens the database and an Outbox over it that steers calls
// and never sends: its Mailer's transport is a Memory one, and no River
// client works jobs here. A done call's Status shows what came back
// later from the database's event log, the returned laterLog.
func openOutbox(ctx context.Context, e *env, c *common) (*outbox.Outbox, *pgxpool.Pool, *laterLog, error) {
	pool, err := c.open(ctx, e)
	if err != nil {
		return nil, nil, nil, err
	}
	later, err := newLaterLog(pool)
	if err == nil {
		var m *postroom.Mailer
		if m, err = postroom.New(transport.NewMemory(), postroom.Options{Auth: postroom.NoAuth{}}); err == nil {
			var ob *outbox.Outbox
			if ob, err = outbox.New(m, pgxdb.New(pool), outbox.Options{Events: later}); err == nil {
				// The schema first: a database not migrated is said so
				// (ErrNotMigrated), rather than by the first query's error.
				if err = ob.Check(ctx); err == nil {
					return ob, pool, later, nil
				}
			}
		}
	}
	pool.Close()
	return nil, nil, nil, err
}

func runCalls(ctx context.Context, e *env, args []string) error {
	var c common
	var q outbox.CallsQuery
	var before string
	fs := newFlags(e, "calls", "", &c)
	fs.StringVar(&q.AccountID, "account", "", "the account whose calls are listed (required)")
	fs.IntVar(&q.Limit, "limit", outbox.DefaultCallsLimit, "the most calls listed")
	fs.StringVar(&before, "before", "", "continue a listing: the cursor that the previous page printed")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	if q.AccountID == "" {
		return usagef("-account is required")
	}
	q.Before = outbox.Cursor(before)
	ob, pool, _, err := openOutbox(ctx, e, &c)
	if err != nil {
		return err
	}
	defer pool.Close()
	calls, next, err := ob.Calls(ctx, q)
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(e.stdout, struct {
			Calls []outbox.CallSummary `json:"calls"`
			Next  outbox.Cursor        `json:"next,omitempty"`
		}{calls, next})
	}
	for _, s := range calls {
		fmt.Fprintf(e.stdout, "%s  %s  %-21s  %-7s  %d recipients: %s%s\n", s.ID,
			s.StartedAt.UTC().Format(time.RFC3339), s.Operation, s.State, s.Recipients, counts(s.Counts), listNote(s.List))
	}
	if next != "" {
		fmt.Fprintf(e.stdout, "more: postroom calls -account %s -before %s\n", quote(q.AccountID), next)
	}
	return nil
}

// listNote is the end of a call's line that names its list: "; list ID",
// or nothing for a transactional call. Enqueue accepts only printable
// ASCII list ids (RFC 2919), but a call stored before it checked them
// got its list from its header as it was: it is made one line of
// printable text (replytext.Line) like the texts that come from afar.
func listNote(list string) string {
	if list == "" {
		return ""
	}
	return "; list " + replytext.Line(list)
}

// counts writes counts by status, in a stable order.
func counts(c map[postroom.Status]int) string {
	keys := make([]string, 0, len(c))
	for s := range c {
		keys = append(keys, string(s))
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for k, s := range keys {
		parts[k] = fmt.Sprintf("%s %d", s, c[postroom.Status(s)])
	}
	return strings.Join(parts, ", ")
}

// callView is call's JSON output.
type callView struct {
	*postroom.CallStatus
	Waiting []outbox.WaitingRecipient `json:"waiting"`
}

func runCall(ctx context.Context, e *env, args []string) error {
	var c common
	var watch bool
	var every time.Duration
	fs := newFlags(e, "call", "ID", &c)
	fs.BoolVar(&watch, "watch", false, "follow the call until it is done")
	fs.DurationVar(&every, "interval", time.Second, "with -watch, how often the call is read")
	show := fs.Int("waiting", 20, "the most waiting recipients printed as text (-json prints all)")
	showLater := fs.Int("later", 20, "the most events that came back after the messages left printed as text (-json prints all)")
	rest, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	if every <= 0 {
		return usagef("-interval must be positive")
	}
	ob, pool, later, err := openOutbox(ctx, e, &c)
	if err != nil {
		return err
	}
	defer pool.Close()
	id := rest[0]
	s, err := ob.Status(ctx, id)
	if err != nil {
		return callError(id, err)
	}
	if e.terminal && !c.json && (s.State != postroom.CallDone || watch) {
		s, err = follow(ctx, ob, s, e.stdout, watch, every)
		if err != nil {
			return err
		}
	} else if watch {
		for s.State != postroom.CallDone {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(every):
			}
			if s, err = ob.Status(ctx, id); err != nil {
				return err
			}
		}
	}
	waiting, err := ob.Waiting(ctx, id)
	if err != nil {
		return err
	}
	if c.json {
		if waiting == nil {
			waiting = []outbox.WaitingRecipient{}
		}
		return printJSON(e.stdout, callView{CallStatus: s, Waiting: waiting})
	}
	printCall(e.stdout, s, waiting, *show)
	if s.State == postroom.CallDone {
		printLater(e.stdout, s, later.missing.Load(), *showLater)
	}
	return nil
}

// follow shows the call's progress as a bar of its final results, once,
// or until the call is done when watch is set, and returns its last
// status.
func follow(ctx context.Context, ob *outbox.Outbox, s *postroom.CallStatus, w io.Writer, watch bool, every time.Duration) (*postroom.CallStatus, error) {
	total := 0
	for _, n := range s.Counts {
		total += n
	}
	bar := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(s.ID),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(0),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
	var err error
	for {
		if err := bar.Set(total - s.Counts[postroom.StatusQueued]); err != nil {
			return nil, err
		}
		if s.State == postroom.CallDone || !watch {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(every):
		}
		if s, err = ob.Status(ctx, s.ID); err != nil {
			return nil, err
		}
	}
	if s.State != postroom.CallDone {
		fmt.Fprintln(w)
	}
	return s, nil
}

// printCall writes a call's status, its list, and its waiting recipients
// as text.
func printCall(w io.Writer, s *postroom.CallStatus, waiting []outbox.WaitingRecipient, show int) {
	fmt.Fprintf(w, "call %s: %s; %s%s\n", s.ID, s.State, counts(s.Counts), listNote(s.List))
	if len(waiting) == 0 {
		return
	}
	fmt.Fprintf(w, "waiting (%d):\n", len(waiting))
	for k, r := range waiting {
		if k == show {
			fmt.Fprintf(w, "  ... and %d more (-waiting N, or -json)\n", len(waiting)-show)
			break
		}
		line := fmt.Sprintf("  %d %s %s", r.Index, r.Email, r.State)
		if r.LastReason != "" {
			line += ": " + r.LastReason
		}
		line += fmt.Sprintf("; attempts %d", r.Attempts)
		if r.NextAttempt != nil {
			line += "; next " + r.NextAttempt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintln(w, line)
	}
}

func runCancel(ctx context.Context, e *env, args []string) error {
	var c common
	var reason string
	var wait time.Duration
	fs := newFlags(e, "cancel", "ID", &c)
	fs.StringVar(&reason, "reason", "", "why, kept in each cancelled recipient's reason")
	fs.DurationVar(&wait, "wait", 30*time.Second, "how long to wait for the recipients being sent to get their outcome, then cancel those it deferred (0: do not wait)")
	rest, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	ob, pool, _, err := openOutbox(ctx, e, &c)
	if err != nil {
		return err
	}
	defer pool.Close()
	id := rest[0]
	n, err := ob.Cancel(ctx, id, reason)
	if err != nil {
		return callError(id, err)
	}
	sending, err := settleInFlight(ctx, ob, id, reason, wait, &n)
	if err != nil {
		return err
	}
	if n == 0 && sending == 0 {
		// Nothing cancelled: a call that had finished says so.
		s, err := ob.Status(ctx, id)
		if err != nil {
			return callError(id, err)
		}
		if s.State == postroom.CallDone {
			if c.json {
				return printJSON(e.stdout, map[string]any{"call_id": id, "canceled": 0, "sending": 0, "done": true, "counts": s.Counts})
			}
			fmt.Fprintf(e.stdout, "call %s: already done (%s): nothing to cancel\n", id, counts(s.Counts))
			return nil
		}
	}
	if c.json {
		return printJSON(e.stdout, map[string]any{"call_id": id, "canceled": n, "sending": sending, "done": false})
	}
	fmt.Fprintf(e.stdout, "call %s: %d recipients cancelled (rejected, %s)\n", id, n, outbox.ReasonCallCanceled)
	if sending > 0 {
		fmt.Fprintf(e.stdout, "%d recipients are still being sent and get their own outcome; run cancel again once they have it, to cancel any that was deferred\n", sending)
	}
	return nil
}

// settleInFlight waits, at most wait, until no recipient of call id is
// being sent, then cancels those that their runs deferred meanwhile
// (a run that ended before River's cancellation reached it leaves them
// deferred without a job), adding them to *n. It returns how many are
// still being sent when wait ran out.
func settleInFlight(ctx context.Context, ob *outbox.Outbox, id, reason string, wait time.Duration, n *int) (int, error) {
	deadline := time.Now().Add(wait)
	for {
		w, err := ob.Waiting(ctx, id)
		if err != nil {
			return 0, err
		}
		sending := 0
		for _, r := range w {
			if r.State == outbox.WaitingSending {
				sending++
			}
		}
		if sending == 0 {
			if len(w) > 0 {
				more, err := ob.Cancel(ctx, id, reason)
				*n += more
				return 0, err
			}
			return 0, nil
		}
		if !time.Now().Before(deadline) {
			return sending, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func runRetry(ctx context.Context, e *env, args []string) error {
	var c common
	fs := newFlags(e, "retry", "ID", &c)
	rest, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	ob, pool, _, err := openOutbox(ctx, e, &c)
	if err != nil {
		return err
	}
	defer pool.Close()
	n, err := ob.Retry(ctx, rest[0])
	if err != nil {
		return callError(rest[0], err)
	}
	if c.json {
		return printJSON(e.stdout, map[string]any{"call_id": rest[0], "retried": n})
	}
	fmt.Fprintf(e.stdout, "call %s: %d deferred recipients to be retried now\n", rest[0], n)
	return nil
}
