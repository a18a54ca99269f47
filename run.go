package postroom

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	// Result that Run returns at that index. It is called exactly once per
	// recipient, before Run returns, when the call gets past its
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
}

// Run runs call as operation op with the per-call settings o. Send and
// SendTemplate are Run with zero RunOptions; its results and errors are
// theirs.
func (m *Mailer) Run(ctx context.Context, op Operation, call *Call, o RunOptions) ([]Result, error) {
	if err := m.made(); err != nil {
		return nil, err
	}
	switch op {
	case OpSend, OpSendTemplate:
	default:
		return nil, fmt.Errorf("postroom: Run: unknown operation %d", int(op))
	}
	if call == nil {
		return nil, &ValidationError{Field: "call", Reason: "nil"}
	}
	start := time.Now()
	j, err := m.prepare(ctx, op, call)
	if err != nil {
		return nil, err
	}
	j.hooks = o
	results, err := j.run(ctx)
	if m.opts.Logger.Enabled(ctx, slog.LevelDebug) {
		counts := map[Status]int{}
		for _, r := range results {
			counts[r.Status]++
		}
		m.opts.Logger.LogAttrs(ctx, slog.LevelDebug, "postroom call",
			slog.String("account_id", call.AccountID),
			slog.Int("recipients", len(results)),
			slog.Any("statuses", counts),
			slog.Duration("elapsed", time.Since(start)),
			slog.Any("error", err))
	}
	return results, err
}

// run delivers every recipient with bounded concurrency: workers take the
// next index and write results[i] only, each recipient's Result coming
// out of deliver. A worker whose transport reports ErrTransportUnusable
// (or that panics) returns the error to the group, whose context then
// stops the others before their next recipient; the sends already in
// flight keep ctx and finish. The recipients no worker reached are filled
// in after the group has ended. Every goroutine has ended when run
// returns.
func (j *job) run(ctx context.Context) ([]Result, error) {
	results := j.results // the recipients validate refused are in already
	n := len(results)
	if j.hooks.OnResult != nil || j.m.opts.OnEvent != nil {
		for i := range results {
			if results[i].Status != "" {
				j.report(ctx, results, i, results[i])
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

// workClaim is how many recipient indexes a worker takes at once in a
// call of at least 16 × workClaim × Concurrency recipients (at
// GOMAXPROCS 2 about 1 µs a recipient less in the 25,000-recipient
// pipeline).
const workClaim = 4

// work is one worker's loop: it takes the next recipient index until none
// is left, or stopped is done (another worker stopped the group), or the
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
	i, end := 0, 0 // [i, end): the indexes this worker has taken and not begun
	for ; ; i++ {
		if i == end {
			i = int(next.Add(int64(claim))) - claim
			if i >= n {
				return nil
			}
			end = min(i+claim, n)
		}
		switch {
		case results[i].Status != "":
			// Refused by validate.
		case ctx.Err() != nil:
			j.report(ctx, results, i, j.resultOf(ctx, i, deferredBy(ctx.Err()), ""))
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
					j.report(ctx, results, i, j.resultOf(ctx, i, deferredBy(ctx.Err()), ""))
					continue
				}
			}
			res, err := j.deliverIn(ctx, i, w, gate, s)
			j.report(ctx, results, i, res)
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
// recipients in flight hold is garbage, not kept by idle workers.
func (j *job) deliverIn(ctx context.Context, i int, w *worker, gate *inFlight, s slot) (Result, error) {
	held := 0
	if gate != nil {
		defer func() { gate.release(s, held) }()
	}
	res, err := j.deliver(ctx, i, w)
	fp := w.footprint()
	if res.SendID != "" {
		held = fp // a message was made, whatever the transport said
	}
	if fp > keptBufferBytes {
		w.dropBuffers()
	}
	return res, err
}

// finish fills in the recipients no worker reached once every worker has
// ended, and returns run's error.
func (j *job) finish(ctx context.Context, results []Result, stop error) ([]Result, error) {
	if stop != nil || ctx.Err() != nil {
		// The recipients that workers left when the group stopped.
		for i := range results {
			if results[i].Status != "" {
				continue
			}
			var o outcome
			if err := ctx.Err(); err != nil {
				o = deferredBy(err)
			} else {
				o = notAttempted(stop)
			}
			j.report(ctx, results, i, j.resultOf(ctx, i, o, ""))
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

// report makes r recipient i's final Result and passes it to
// RunOptions.OnResult, then, when it is an event, to Options.OnEvent.
func (j *job) report(ctx context.Context, results []Result, i int, r Result) {
	results[i] = r
	if j.hooks.OnResult != nil {
		j.hooks.OnResult(i, r)
	}
	if j.m.opts.OnEvent != nil {
		j.emit(ctx, i, r)
	}
}
