package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"

	"github.com/postroom/postroom"
)

// Worker is the River worker of the outbox's jobs (kind
// "postroom_outbox_send"). Register it on the River client of every
// instance that should send, before the client starts:
//
//	river.AddWorker(workers, ob.Worker())
//
// One run of a job sends the recipients of its range that have no final
// result, BatchSize at a time: it hands a batch to the Mailer as one run
// of the job's call (postroom.Prepared.RunSome), prepared and its key
// checked once, by the run's first batch (see the package
// documentation). Each recipient is reserved just before its
// message is handed over, once it holds one of the process's connections
// (Options.Connections), and its result written soon after it is known:
// one write at a time, each reserving the messages waiting for it and
// carrying the results known since the last,
// the next starting as soon as it ends (group commit); results are
// written at least every 100 ms. A transport that accepts a message in
// under a millisecond gets the rest of a batch in one reservation, and
// the next batch reserved by the write of this one's last results, one
// write per batch. Each write is one row (see fold.go). Every write is retried
// while PostgreSQL is out of reach (a restart), for up to 10 seconds. A
// recipient that a run reserved and whose result it did not write (its
// process died) is unknown (postroom.ReasonInterrupted) for the next run,
// never sent again; one it had not reserved is sent by the next run. So
// a killed process leaves unknown at most its messages in flight (one
// per connection: a message waiting for a connection is not reserved)
// and the results known since its jobs' last writes (with a transport
// that fast, at most a batch per job).
//
// Deferred recipients stay in the job, which River runs again after
// Options.Backoff (a snooze, which does not count as an attempt), until
// they are delivered, refused, or Options.MaxAge has passed (then
// rejected, ReasonExpired).
//
// A call refused as a whole when its job runs (its key no longer
// accepted, a stored template deleted) gives its remaining recipients the
// final status invalid, reason not-sent. Any other error of a run (the
// database unreachable, a template store unreachable, the job's timeout)
// is returned to River, which retries the job by its retry policy; so is
// a panic, which River recovers.
//
// A job never ends with recipients left without a final result. Enqueue
// inserts the jobs with River's MaxAttempts at Options.MaxAttempts + 1,
// and River's last attempt of a job sends nothing: it gives up the
// recipients that the failed runs before it left (see ReasonGaveUp), and
// keeps trying to write that (snoozing, which uses no attempt) until it
// has. A run that is cancelled (River's Client.JobCancel while it runs),
// or that finds the call's stored rows unreadable, gives its recipients
// up the same way before it returns.
type Worker struct {
	river.WorkerDefaults[SendArgs]
	o    *Outbox
	fast atomic.Bool // the transport accepts a message in under fastTransport (see handover)
}

// Worker returns the outbox's River worker.
func (o *Outbox) Worker() *Worker { return &Worker{o: o} }

// writeTimeout bounds a write of a batch with its retries (see retry),
// and the writes of results made after the job's context ended (its
// timeout, the client stopping): the outcomes are known and must be
// kept.
const writeTimeout = 10 * time.Second

// Work runs one run of a job: River's last attempt gives the job's
// recipients up (lastAttempt); any other sends them.
func (w *Worker) Work(ctx context.Context, job *river.Job[SendArgs]) error {
	if job.Attempt >= job.MaxAttempts {
		return w.lastAttempt(ctx, job)
	}
	err := w.run(ctx, job)
	if err == nil {
		return nil
	}
	var ue *unreadableError
	var why string
	switch {
	case errors.Is(context.Cause(ctx), river.ErrJobCancelledRemotely):
		why = "not sent: its job was cancelled"
	case errors.As(err, &ue):
		why = "not sent: the stored " + ue.what + " could not be read"
	default:
		return err
	}
	// River ends the job now: its recipients get their results first. If
	// that cannot be written, the error goes back to River: a job with an
	// unreadable row is retried (and gives up again, at the latest in its
	// last attempt); a cancelled one ends all the same.
	if _, gerr := w.giveUp(ctx, job.Args, why); gerr != nil {
		return gerr
	}
	return err
}

// run sends the job's recipients.
func (w *Worker) run(ctx context.Context, job *river.Job[SendArgs]) error {
	o := w.o
	args := job.Args
	l, err := takeLease(ctx, o.db, args)
	if errors.Is(err, errGone) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	todo, err := l.pending(ctx)
	if err != nil || len(todo) == 0 {
		return err
	}
	recipients, err := decodeRecipients(l.chunk)
	if err != nil || len(recipients) != args.Count {
		if err == nil {
			err = fmt.Errorf("%d recipients for a job of %d", len(recipients), args.Count)
		}
		return river.JobCancel(&unreadableError{what: "recipients", callID: args.CallID, err: err})
	}
	now := o.opts.Now()
	deadline := l.started.Add(o.opts.MaxAge)
	if !now.Before(deadline) {
		reasons := make([]string, len(todo))
		for k, i := range todo {
			reasons[k] = fmt.Sprintf("%s: not delivered within %v", ReasonExpired, o.opts.MaxAge)
			if last := l.last(i); last != "" {
				reasons[k] += "; last attempt: " + last
			}
		}
		return l.settle(ctx, todo, postroom.StatusRejected, ReasonExpired, reasons)
	}
	sc, err := o.load(ctx, args.CallID, l.op)
	if err != nil {
		return err
	}
	jc := sc.jobCall(args.First, recipients) // prepared by the first batch (cache.go)

	var sent, deferred int
	ahead := false // the batch was reserved by the last batch's last write
	for len(todo) > 0 {
		batch := todo[:min(o.opts.BatchSize, len(todo))]
		todo = todo[len(batch):]
		if o.opts.Logger.Enabled(ctx, slog.LevelDebug) {
			o.opts.Logger.LogAttrs(ctx, slog.LevelDebug, "outbox batch",
				slog.String("call_id", args.CallID), slog.Int("first", args.First),
				slog.Int("from", int(batch[0])), slog.Int("to", int(batch[len(batch)-1])))
		}
		h := newHandover(l, batch, &w.fast, o.conns)
		if ahead {
			h.reservedAhead()
		}
		results, runErr := func() ([]postroom.Result, error) {
			defer h.releaseAll() // even if the Mailer panics: the connections are the process's
			return jc.send(ctx, o.m, batch, h.hooks(ctx))
		}()
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
		if results == nil {
			// Refused as a whole: nothing was handed over.
			err := w.refused(wctx, l, batch, todo, runErr)
			cancel()
			return err
		}
		// A transport that fast gets the next batch reserved in this
		// batch's last write (see handover).
		var next []int32
		if runErr == nil && ctx.Err() == nil && w.fast.Load() {
			next = todo[:min(o.opts.BatchSize, len(todo))]
		}
		ahead, err = h.finish(wctx, results, next)
		cancel()
		if err != nil {
			return err
		}
		if h.superseded {
			// A newer run of the job holds the lease: the rest is its.
			o.opts.Logger.LogAttrs(ctx, slog.LevelDebug, "outbox job superseded",
				slog.String("call_id", args.CallID), slog.Int("first", args.First))
			return nil
		}
		for _, r := range results {
			switch r.Status {
			case postroom.StatusDeferred:
				deferred++
			default:
				sent++
			}
		}
		if runErr != nil {
			if ctx.Err() != nil {
				return runErr // River retries the job
			}
			// The transport is unusable: the rest waits for the retry.
			deferred += len(todo)
			break
		}
	}
	o.opts.Logger.LogAttrs(ctx, slog.LevelDebug, "outbox job",
		slog.String("call_id", args.CallID), slog.Int("first", args.First),
		slog.Int("final", sent), slog.Int("deferred", deferred))
	if deferred == 0 {
		return nil
	}
	wait := min(o.opts.Backoff(snoozes(job)+1), deadline.Sub(o.opts.Now()))
	return river.JobSnooze(max(wait, 0))
}

// snoozes is how many times River has snoozed the job (its metadata's
// count; none when absent).
func snoozes(job *river.Job[SendArgs]) int {
	var meta struct {
		Snoozes int `json:"snoozes"`
	}
	_ = json.Unmarshal(job.Metadata, &meta)
	return meta.Snoozes
}

// refused settles the recipients of a call that Run refused as a whole,
// before handing anything over (so no recipient is reserved): batch, the
// batch it was given, and rest, the job's recipients after it. A refusal
// that says the call is wrong (authentication, validation) is final:
// invalid, not-sent, for batch and rest. Any other error (a template
// store unreachable) leaves batch deferred (not-sent) and is returned,
// for River to retry the job.
func (w *Worker) refused(ctx context.Context, l *lease, batch, rest []int32, err error) error {
	var ve *postroom.ValidationError
	final := errors.Is(err, postroom.ErrUnauthorized) || errors.Is(err, postroom.ErrNoRecipients) ||
		errors.Is(err, postroom.ErrTooManyRecipients) || errors.As(err, &ve)
	if !final {
		// The batch keeps a deferred row that says why, which the job's
		// giving up repeats if it comes to that.
		reason := string(postroom.ReasonNotSent) + ": the call could not be prepared"
		reasons := make([]string, len(batch))
		for k := range reasons {
			reasons[k] = reason
		}
		if serr := l.settle(ctx, batch, postroom.StatusDeferred, postroom.ReasonNotSent, reasons); serr != nil {
			return serr
		}
		return fmt.Errorf("outbox: job %s/%d: %w", l.args.CallID, l.args.First, err)
	}
	detail := "unauthorized"
	switch {
	case ve != nil:
		detail = "invalid " + ve.Field
	case errors.Is(err, postroom.ErrNoRecipients), errors.Is(err, postroom.ErrTooManyRecipients):
		detail = "recipients"
	}
	reason := string(postroom.ReasonNotSent) + ": the call was refused when its job ran (" + detail + ")"
	all := slices.Concat(batch, rest)
	reasons := make([]string, len(all))
	for k := range reasons {
		reasons[k] = reason
	}
	return l.settle(ctx, all, postroom.StatusInvalid, postroom.ReasonNotSent, reasons)
}
