package postroom

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// Mailer sends calls: it authenticates and validates them, renders every
// recipient's message and hands it to its Transport. A Mailer is immutable
// and safe for concurrent use; each call's state lives in that call.
type Mailer struct {
	t      Transport
	opts   Options
	queued bool
	// workers pools the render workers' buffers across calls. It is the
	// one thing a Mailer changes after New, and it is invisible: a buffer
	// holds nothing from one recipient to the next.
	workers sync.Pool
	// cache holds compiled templates across calls (cache.go): like
	// workers, state that never shows in what a call returns.
	cache templateCache
}

// New returns a Mailer that delivers through t. It validates opts and fills
// in the defaults of its zero fields.
func New(t Transport, opts Options) (*Mailer, error) {
	if t == nil {
		return nil, errors.New("postroom: New: nil Transport")
	}
	if opts.Auth == nil {
		return nil, errors.New("postroom: New: Options.Auth is nil: use postroom.StaticKeys to check keys, or postroom.NoAuth{} if the application authenticates callers itself")
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"Concurrency", &opts.Concurrency, max(8, 4*runtime.GOMAXPROCS(0))},
		{"MaxRecipients", &opts.MaxRecipients, DefaultMaxRecipients},
		{"MaxMessageBytes", &opts.MaxMessageBytes, DefaultMaxMessageBytes},
		{"MaxBCC", &opts.MaxBCC, DefaultMaxBCC},
		{"MaxHeaders", &opts.MaxHeaders, DefaultMaxHeaders},
		{"MaxTemplateBytes", &opts.MaxTemplateBytes, DefaultMaxTemplateBytes},
		{"MaxTemplateDepth", &opts.MaxTemplateDepth, DefaultMaxTemplateDepth},
		{"MaxRenderBytes", &opts.MaxRenderBytes, DefaultMaxRenderBytes},
		{"MaxRenderSteps", &opts.MaxRenderSteps, DefaultMaxRenderSteps},
	} {
		switch {
		case *f.v < 0:
			return nil, fmt.Errorf("postroom: New: Options.%s is negative (%d)", f.name, *f.v)
		case *f.v == 0:
			*f.v = f.def
		}
	}
	opts.checkTemplateCache()
	if err := opts.checkDeliverability(); err != nil {
		return nil, err
	}
	if err := opts.checkHelpers(); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Rand == nil {
		opts.Rand = rand.Reader
	}
	m := &Mailer{t: t, opts: opts}
	if q, ok := t.(Queuer); ok && q.Queued() {
		m.queued = true
	}
	return m, nil
}

// Send is message.send: it sends call.Message's html and text to every
// recipient. It returns exactly one Result per recipient, in input order,
// or a call-level error and no results when the call is refused before
// anything is sent (ErrUnauthorized, ErrNoRecipients, ErrTooManyRecipients,
// *ValidationError, possibly several joined with errors.Join).
//
// When ctx is done mid-call, Send returns the full results (recipients not
// finished are deferred with reason canceled or timeout) together with
// ctx's error. When the transport reports ErrTransportUnusable, Send stops
// handing over messages and returns the full results (recipients not
// handed over are deferred, transport-unusable) together with that error.
func (m *Mailer) Send(ctx context.Context, call *Call) ([]Result, error) {
	return m.send(ctx, call, false, nil)
}

// SendTemplate is message.send_template: like Send, with the html and text
// bodies taken from Options.Templates by message.html_template_id and
// message.text_template_id, in the call's account.
func (m *Mailer) SendTemplate(ctx context.Context, call *Call) ([]Result, error) {
	return m.send(ctx, call, true, nil)
}

func (m *Mailer) send(ctx context.Context, call *Call, stored bool, o *RunOptions) ([]Result, error) {
	if call == nil {
		return nil, &ValidationError{Field: "call", Reason: "nil"}
	}
	start := time.Now()
	j, err := m.prepare(ctx, call, stored)
	if err != nil {
		return nil, err
	}
	if o != nil {
		j.onResult, j.beforeSend = o.OnResult, o.BeforeSend
	}
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

// run renders and hands over every recipient with bounded concurrency:
// workers take the next index and write results[i] only. A worker whose
// transport reports ErrTransportUnusable (or that panics) returns the error
// to the group, whose context then stops the others before their next
// recipient; the sends already in flight keep ctx and finish. The
// recipients no worker reached are filled in after the group has ended.
// Every goroutine has ended when run returns.
func (j *job) run(ctx context.Context) ([]Result, error) {
	n := len(j.call.Recipients)
	results := make([]Result, n)
	j.checkRecipients(results)
	if j.onResult != nil {
		for i := range results {
			if results[i].Status != "" {
				j.onResult(i, results[i])
			}
		}
	}
	var next atomic.Int64
	var panicked atomic.Pointer[any]
	workers := min(j.m.opts.Concurrency, n)
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
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return nil
				}
				r := &j.call.Recipients[i]
				switch {
				case results[i].Status != "":
					// Found invalid by checkRecipients.
				case ctx.Err() != nil:
					j.finish(results, i, outcome{status: StatusDeferred, code: contextCode(ctx.Err()), err: ctx.Err()}.result(r.Email, ""))
				case stopped.Err() != nil:
					return nil // another worker stopped the group: see below
				default:
					res, err := j.deliver(ctx, i, w)
					j.finish(results, i, res)
					if errors.Is(err, ErrTransportUnusable) {
						return err
					}
				}
			}
		})
	}
	stop := g.Wait()
	if p := panicked.Load(); p != nil {
		panic(*p) // a Transport or MIME bug: re-raised on the caller's goroutine
	}
	if stop != nil || ctx.Err() != nil {
		// The recipients that workers left when the group stopped.
		for i := range results {
			if results[i].Status != "" {
				continue
			}
			email := j.call.Recipients[i].Email
			if err := ctx.Err(); err != nil {
				j.finish(results, i, outcome{status: StatusDeferred, code: contextCode(err), err: err}.result(email, ""))
			} else {
				j.finish(results, i, notAttempted(stop).result(email, ""))
			}
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

// finish makes r recipient i's final Result and reports it to OnResult.
func (j *job) finish(results []Result, i int, r Result) {
	results[i] = r
	if j.onResult != nil {
		j.onResult(i, r)
	}
}
