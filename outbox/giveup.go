package outbox

// Giving up: how a job that River is about to end (its attempts used
// up, cancelled, its stored rows unreadable) leaves every recipient with
// a final result. River discards a job whose last attempt fails, and
// nothing of the outbox runs after that; so the outbox keeps River's last
// attempt for itself, and sends nothing in it.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/postroom/postroom"
)

// unreadableError: a stored row of the job's call (what: "call" for its
// body, "recipients" for the job's chunk) cannot be decoded. The job is
// cancelled, after giving its recipients up.
type unreadableError struct {
	what   string
	callID string
	err    error
}

func (e *unreadableError) Error() string {
	return fmt.Sprintf("outbox: call %s: stored %s unreadable: %v", e.callID, e.what, e.err)
}

func (e *unreadableError) Unwrap() error { return e.err }

// NextRetry makes River's last attempt of a job, which only gives up its
// recipients (see Work), follow the failed run before it at once; the
// other retries follow River's retry policy (the zero time).
func (w *Worker) NextRetry(job *river.Job[SendArgs]) time.Time {
	if job.Attempt+1 >= job.MaxAttempts {
		return time.Now()
	}
	return time.Time{}
}

// lastAttempt is River's last attempt of a job, reached only after
// MaxAttempts-1 failed runs (snoozes use no attempt): it gives up the
// recipients still without a final result. If that cannot be written
// (the database unreachable), it snoozes, which keeps this the last
// attempt, and tries again after Options.Backoff.
func (w *Worker) lastAttempt(ctx context.Context, job *river.Job[SendArgs]) error {
	o := w.o
	failed := job.Attempt - 1
	runs := "runs"
	if failed == 1 {
		runs = "run"
	}
	n, err := w.giveUp(ctx, job.Args, fmt.Sprintf("not sent after %d failed %s of its job", failed, runs))
	attrs := []slog.Attr{
		slog.String("call_id", job.Args.CallID), slog.Int("first", job.Args.First),
		slog.Int64("job_id", job.ID), slog.Int("failed_runs", failed),
	}
	if k := len(job.Errors); k > 0 {
		attrs = append(attrs, slog.String("last_error", job.Errors[k-1].Error))
	}
	if err != nil {
		wait := o.opts.Backoff(snoozes(job) + 1)
		o.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "outbox job could not give up its recipients; retrying",
			append(attrs, slog.String("error", err.Error()), slog.Duration("wait", wait))...)
		return river.JobSnooze(wait)
	}
	if n > 0 {
		o.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "outbox job gave up its recipients",
			append(attrs, slog.Int("recipients", n))...)
	}
	return nil
}

// giveUp gives every recipient of the job without a final result one,
// and returns how many it found without one: a recipient that an earlier run reserved
// and did not record is unknown, interrupted (as for any run, see
// lease.pending); any other (never tried, or deferred) is rejected,
// ReasonGaveUp, its reason why followed by its last attempt's reason if
// it had one. It takes the job's lease, so a run that outlived its turn
// changes nothing after it. Its writes outlive ctx's end (a cancelled
// job), bounded by writeTimeout.
func (w *Worker) giveUp(ctx context.Context, args SendArgs, why string) (int, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	l, err := takeLease(ctx, w.o.db, args)
	if errors.Is(err, errGone) {
		return 0, nil // the call was deleted: no recipient is left
	}
	if err != nil {
		return 0, err
	}
	todo, err := l.pending(ctx)
	if err != nil || len(todo) == 0 {
		return 0, err
	}
	reasons := make([]string, len(todo))
	for k, i := range todo {
		reasons[k] = string(ReasonGaveUp) + ": " + why
		if last := l.last(i); last != "" {
			reasons[k] += "; last attempt: " + last
		}
	}
	if err := l.settle(ctx, todo, postroom.StatusRejected, ReasonGaveUp, reasons); err != nil {
		return 0, err
	}
	return len(todo), nil
}
