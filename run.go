package postroom

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// Operation is one of the spec's two operations.
type Operation int

const (
	// OpSend is message.send: the bodies are in the call.
	OpSend Operation = iota
	// OpSendTemplate is message.send_template: the bodies come from
	// Options.Templates.
	OpSendTemplate
)

// String returns the spec's name of the operation.
func (op Operation) String() string {
	switch op {
	case OpSend:
		return "message.send"
	case OpSendTemplate:
		return "message.send_template"
	}
	return fmt.Sprintf("postroom.Operation(%d)", int(op))
}

// RunOptions are a call's settings beside its body. The zero value runs
// the call as Send and SendTemplate do.
type RunOptions struct {
	// OnResult, when not nil, receives each recipient's Result as soon as
	// it is final: i is the recipient's index in call.Recipients and r the
	// Result that Run returns at that index (Prepared.RunSome: at the
	// index's position in its indexes). It is called exactly once per
	// recipient run, before Run returns, when the call gets past its
	// call-level checks (a call refused as a whole reports nothing).
	//
	// It is called from the goroutine that called Run (for recipients
	// refused before any rendering, and for those left when the call
	// stops early) and from the call's workers, concurrently: it must be
	// safe for concurrent use. A worker waits for it before taking the next
	// recipient, so a slow OnResult slows the call; hand slow work (a
	// database write, a network stream) to a goroutine of your own or
	// batch it.
	OnResult func(i int, r Result)

	// BeforeSend, when not nil, is called with recipient i's send id just
	// before its message is handed to the transport, from the worker that
	// hands it over. An error keeps the message back: the recipient is
	// deferred with reason not-sent and Result.Err holds the error. Use it
	// to record durably that a message is about to leave (so that after a
	// crash it is known to be possibly sent), or to rate-limit.
	BeforeSend func(ctx context.Context, i int, sendID string) error

	// CallID is the call's id in the run's events (Event.CallID): package
	// outbox passes the id Enqueue gave the call. Empty means an id drawn
	// for the run.
	CallID string
}

// Run runs call as operation op with the per-call settings o: Prepare,
// then the Prepared's Run. Send and SendTemplate are Run with zero
// RunOptions; its results and errors are theirs.
func (m *Mailer) Run(ctx context.Context, op Operation, call *Call, o RunOptions) ([]Result, error) {
	start := time.Now()
	p, err := m.prepare(ctx, op, call, true)
	if err != nil {
		return nil, err
	}
	return p.run(ctx, nil, o, start)
}

// Run sends the prepared call to every recipient, as Mailer.Run does, and
// returns exactly one Result per recipient, in input order; its results,
// errors and hooks are Mailer.Run's, apart from the call-level refusals,
// which Prepare made.
//
// Each run draws its own keys from Options.Rand (the send ids and the MIME
// boundaries), stamps its own Date with Options.Now and sets up its own
// signing: the messages of two runs differ, as those of two calls do, and
// a message sent by a later run carries that run's Date. A run can still
// refuse the call as a whole when Options.Rand fails; then it returns no
// results.
func (p *Prepared) Run(ctx context.Context, o RunOptions) ([]Result, error) {
	if err := p.made(); err != nil {
		return nil, err
	}
	return p.run(ctx, nil, o, time.Now())
}

// RunSome is Run for the recipients indexes only (indexes in
// call.Recipients): it returns one Result per index, results[k] being
// recipient indexes[k]'s, and sends to no other recipient. Result,
// RunOptions.OnResult and RunOptions.BeforeSend mean what they mean for
// Run: their index is the recipient's index in call.Recipients, and every
// recipient's checks (duplicates included) are those of the whole call, as
// Prepare made them. The recipients are taken in the order of indexes.
// An index out of range, or given twice, fails the run before anything is
// sent; an empty indexes sends nothing and returns no results.
//
// RunSome is for callers that send a call in parts, or again to the
// recipients a first run left (packages idempotency and outbox).
func (p *Prepared) RunSome(ctx context.Context, indexes []int, o RunOptions) ([]Result, error) {
	if err := p.made(); err != nil {
		return nil, err
	}
	n := len(p.call.Recipients)
	seen := make([]uint64, (n+63)/64)
	for _, i := range indexes {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("postroom: RunSome: recipient index %d out of range: the call has %d recipients", i, n)
		}
		if seen[i/64]&(1<<(i%64)) != 0 {
			return nil, fmt.Errorf("postroom: RunSome: recipient index %d given twice", i)
		}
		seen[i/64] |= 1 << (i % 64)
	}
	if len(indexes) == 0 {
		return []Result{}, nil
	}
	return p.run(ctx, indexes, o, time.Now())
}

// run seals a run of p over the recipients indexes (nil: all) and runs
// it, and logs it at debug level, start being when the call began.
func (p *Prepared) run(ctx context.Context, indexes []int, o RunOptions, start time.Time) ([]Result, error) {
	j, err := p.seal(indexes, o)
	if err != nil {
		return nil, err
	}
	results, err := j.run(ctx)
	if log := p.m.opts.Logger; log.Enabled(ctx, slog.LevelDebug) {
		log.LogAttrs(ctx, slog.LevelDebug, "postroom call",
			slog.String("account_id", p.call.AccountID),
			slog.Int("recipients", len(results)),
			slog.Any("statuses", CountStatuses(results)),
			slog.Duration("elapsed", time.Since(start)),
			slog.Any("error", err))
	}
	return results, err
}

// run delivers every recipient with bounded concurrency: workers take the
// next position and write results[k] only, each recipient's Result coming
// out of deliver. A worker whose transport reports ErrTransportUnusable
// (or that panics) returns the error to the group, whose context then
// stops the others before their next recipient; the sends already in
// flight keep ctx and finish. The recipients no worker reached are filled
// in after the group has ended. Every goroutine has ended when run
// returns.
func (j *job) run(ctx context.Context) ([]Result, error) {
	results := j.startResults() // the recipients validate refused are in already
	if err := j.suppress(ctx, results); err != nil {
		return nil, err
	}
	n := len(results)
	if j.hooks.OnResult != nil || j.m.opts.OnEvent != nil {
		for k := range results {
			if results[k].Status != "" {
				j.report(ctx, results, k, results[k])
			}
		}
	}
	var next atomic.Int64
	var panicked atomic.Pointer[any]
	workers := min(j.m.opts.Concurrency, n)
	if workers == 1 {
		// One worker: on the caller's goroutine, with no group to start
		// and wake (the common one-recipient call). A panic goes up the
		// caller's stack as it is, and its worker is not reused.
		w, _ := j.m.workers.Get().(*worker)
		if w == nil {
			w = new(worker)
		}
		stop := j.work(ctx, ctx, results, &next, w, nil)
		j.m.workers.Put(w)
		return j.finish(ctx, results, stop)
	}
	gate := newInFlight(j.m.opts.Concurrency, j.m.opts.MaxMessageBytes)
	g, stopped := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for range workers {
		g.Go(func() (err error) {
			defer func() {
				if p := recover(); p != nil {
					panicked.CompareAndSwap(nil, &p)
					err = fmt.Errorf("postroom: worker panicked: %v", p)
				}
			}()
			w, _ := j.m.workers.Get().(*worker)
			if w == nil {
				w = new(worker)
			}
			defer j.m.workers.Put(w)
			return j.work(ctx, stopped, results, &next, w, gate)
		})
	}
	stop := g.Wait()
	if p := panicked.Load(); p != nil {
		panic(*p) // a Transport or MIME bug: re-raised on the caller's goroutine
	}
	return j.finish(ctx, results, stop)
}

// startResults returns the run's results before any recipient is run:
// the checks of its recipients.
func (j *job) startResults() []Result {
	switch {
	case j.indexes == nil && j.oneShot:
		return j.checks // this run is the Prepared's only use
	case j.indexes == nil:
		return slices.Clone(j.checks)
	}
	results := make([]Result, len(j.indexes))
	for k, i := range j.indexes {
		results[k] = j.checks[i]
	}
	return results
}

// workClaim is how many recipient indexes a worker takes at once in a
// call of at least 16 × workClaim × Concurrency recipients (at
// GOMAXPROCS 2 about 1 µs a recipient less in the 25,000-recipient
// pipeline).
const workClaim = 4

// work is one worker's loop: it takes the next position in the run's
// recipients (k, recipient j.recipient(k), whose Result is results[k])
// until none is left, or stopped is done (another worker stopped the group), or the
// transport reports ErrTransportUnusable, which it returns. A non-nil gate
// bounds the bytes in flight among the workers.
func (j *job) work(ctx, stopped context.Context, results []Result, next *atomic.Int64, w *worker, gate *inFlight) error {
	n := len(results)
	// In a large call indexes are taken workClaim at a time, so that one
	// worker writes adjacent Results: written from two cores, they share
	// cache lines. A smaller call takes them one at a time, so that every
	// worker has some.
	claim := 1
	if n >= 16*workClaim*j.m.opts.Concurrency {
		claim = workClaim
	}
	k, end := 0, 0 // [k, end): the positions this worker has taken and not begun
	for ; ; k++ {
		if k == end {
			k = int(next.Add(int64(claim))) - claim
			if k >= n {
				return nil
			}
			end = min(k+claim, n)
		}
		i := j.recipient(k)
		switch {
		case results[k].Status != "":
			// Refused by validate.
		case ctx.Err() != nil:
			j.report(ctx, results, k, j.resultOf(ctx, i, deferredBy(ctx.Err()), ""))
		case stopped.Err() != nil:
			return nil // another worker stopped the group: see finish
		default:
			var s slot
			if gate != nil {
				var err error
				if s, err = gate.acquire(stopped); err != nil {
					if ctx.Err() == nil {
						return nil // another worker stopped the group: see finish
					}
					j.report(ctx, results, k, j.resultOf(ctx, i, deferredBy(ctx.Err()), ""))
					continue
				}
			}
			res, subject, err := j.deliverIn(ctx, i, w, gate, s)
			j.reportMade(ctx, results, k, res, subject)
			if errors.Is(err, ErrTransportUnusable) {
				return err
			}
		}
	}
}

// deliverIn is deliver within gate's bound when gate is not nil: s, taken
// from gate, is given back however deliver ends, a panic included, so that
// no worker waits for the weight of one that has stopped. The gate learns
// what w's buffers held for the message; buffers larger than
// keptBufferBytes are then dropped, so that memory beyond what the
// recipients in flight hold is garbage, not kept by idle workers. It
// returns the message's rendered subject too when Options.OnEvent takes
// it (else "").
func (j *job) deliverIn(ctx context.Context, i int, w *worker, gate *inFlight, s slot) (res Result, subject string, err error) {
	held := 0
	if gate != nil {
		defer func() { gate.release(s, held) }()
	}
	res, err = j.deliver(ctx, i, w)
	fp := w.footprint()
	if res.SendID != "" {
		held = fp // a message was made, whatever the transport said
		if j.m.opts.OnEvent != nil {
			subject = string(w.rb.subject)
		}
	}
	if fp > keptBufferBytes {
		w.dropBuffers()
	}
	return res, subject, err
}

// finish fills in the recipients no worker reached once every worker has
// ended, and returns run's error.
func (j *job) finish(ctx context.Context, results []Result, stop error) ([]Result, error) {
	if stop != nil || ctx.Err() != nil {
		// The recipients that workers left when the group stopped.
		for k := range results {
			if results[k].Status != "" {
				continue
			}
			var o outcome
			if err := ctx.Err(); err != nil {
				o = deferredBy(err)
			} else {
				o = notAttempted(stop)
			}
			j.report(ctx, results, k, j.resultOf(ctx, j.recipient(k), o, ""))
		}
	}
	if stop != nil {
		return results, stop
	}
	if err := ctx.Err(); err != nil {
		for _, r := range results {
			if r.Status == StatusDeferred && (r.Code == ReasonCanceled || r.Code == ReasonTimeout) {
				return results, err
			}
		}
	}
	return results, nil
}

// report makes r the final Result of the run's k-th recipient and passes
// it to RunOptions.OnResult, with the recipient's index in the call, then,
// when it is an event, to Options.OnEvent.
func (j *job) report(ctx context.Context, results []Result, k int, r Result) {
	j.reportMade(ctx, results, k, r, "")
}

// reportMade is report for a recipient whose message was rendered with
// subject.
func (j *job) reportMade(ctx context.Context, results []Result, k int, r Result, subject string) {
	results[k] = r
	if j.hooks.OnResult != nil {
		j.hooks.OnResult(j.recipient(k), r)
	}
	if j.m.opts.OnEvent != nil {
		j.emit(ctx, j.recipient(k), r, subject)
	}
}
