package events

import (
	"github.com/postroom/postroom/option"

	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/postroom/postroom"
)

// Defaults of RecorderOptions.
const (
	DefaultFlushEvents  = 500
	DefaultFlushAfter   = time.Second
	DefaultFlushTimeout = 10 * time.Second
)

// RecorderOptions configure a Recorder.
type RecorderOptions struct {
	// FlushEvents is how many buffered events make OnEvent write them.
	// Zero means DefaultFlushEvents.
	FlushEvents int

	// FlushAfter is how old the oldest buffered event may grow before the
	// next OnEvent writes the buffer. Zero means DefaultFlushAfter.
	FlushAfter time.Duration

	// FlushTimeout bounds a write that OnEvent makes; the write does not
	// end with the call's ctx (a cancelled call's sends happened).
	// Zero means DefaultFlushTimeout.
	FlushTimeout time.Duration

	// MaxBuffered is how many events are kept while writes fail; beyond
	// it the oldest are dropped, counted and logged. Zero means ten times
	// FlushEvents.
	MaxBuffered int

	// Logger receives the errors of the writes OnEvent makes and the
	// count of dropped events. Nil discards every record, as for every
	// Logger of the module (package option).
	Logger *slog.Logger

	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// Recorder buffers events for an SQL store and writes them in batches:
// its OnEvent is meant as postroom.Options.OnEvent. It writes (one COPY)
// from OnEvent, in the goroutine that called it, when FlushEvents events
// are buffered or the oldest is older than FlushAfter, and from Flush,
// which the application calls after each Run (and before it exits). It
// never starts a goroutine, so nothing of it runs between calls. It is
// safe for concurrent use; writes run outside its lock.
//
// A write that fails keeps its events buffered (up to MaxBuffered) for the
// next one, and its error is returned by the next Flush.
type Recorder struct {
	sql  *SQL
	opts RecorderOptions

	mu      sync.Mutex
	buf     []postroom.Event
	spare   []postroom.Event // a written batch's array, emptied, for the next buffer
	first   time.Time        // when the oldest buffered event arrived
	err     error            // the failed writes' errors since the last Flush
	retryAt time.Time        // after a failed write, OnEvent writes no sooner
	dropped int
}

// NewRecorder returns a Recorder writing to s, or an error naming the
// field of opts that is out of range.
func (s *SQL) NewRecorder(opts RecorderOptions) (*Recorder, error) {
	const op = "events.NewRecorder"
	for _, err := range []error{
		option.Default(op, "RecorderOptions.FlushEvents", &opts.FlushEvents, DefaultFlushEvents),
		option.Default(op, "RecorderOptions.FlushAfter", &opts.FlushAfter, DefaultFlushAfter),
		option.Default(op, "RecorderOptions.FlushTimeout", &opts.FlushTimeout, DefaultFlushTimeout),
		option.Default(op, "RecorderOptions.MaxBuffered", &opts.MaxBuffered, 0),
	} {
		if err != nil {
			return nil, err
		}
	}
	if opts.MaxBuffered == 0 {
		opts.MaxBuffered = 10 * opts.FlushEvents
	}
	opts.MaxBuffered = max(opts.MaxBuffered, opts.FlushEvents)
	opts.Logger = option.Logger(opts.Logger)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Recorder{sql: s, opts: opts}, nil
}

// OnEvent buffers e, and writes the buffer when it is full or old enough
// (see Recorder); after a failed write it waits FlushAfter before the
// next, so that a database that is down does not stall every event.
func (r *Recorder) OnEvent(ctx context.Context, e postroom.Event) {
	now := r.opts.Now()
	if e.At.IsZero() {
		e.At = now
	}
	r.mu.Lock()
	if len(r.buf) == 0 {
		r.first = now
		if r.buf == nil {
			r.buf, r.spare = r.spare, nil
		}
	}
	r.buf = append(r.buf, e)
	due := (len(r.buf) >= r.opts.FlushEvents || now.Sub(r.first) >= r.opts.FlushAfter) && !now.Before(r.retryAt)
	var batch []postroom.Event
	if due {
		batch = r.take()
	}
	r.mu.Unlock()
	if batch == nil {
		return
	}
	// The events of a call that was cancelled still happened: record
	// them within FlushTimeout whatever ctx says.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.opts.FlushTimeout)
	defer cancel()
	if err := r.write(ctx, batch); err != nil {
		r.opts.Logger.Error("events: recording a batch failed; kept for the next", "events", len(batch), "err", err)
	}
}

// Flush writes every buffered event and returns the error of this write
// joined with those of the writes OnEvent made since the last Flush.
func (r *Recorder) Flush(ctx context.Context) error {
	r.mu.Lock()
	batch := r.take()
	r.mu.Unlock()
	r.write(ctx, batch) // its error joins r.err
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.err
	r.err = nil
	return err
}

// take empties the buffer and returns what it held; r.mu is held.
func (r *Recorder) take() []postroom.Event {
	b := r.buf
	r.buf = nil
	return b
}

// write records batch; when it fails it puts batch back in front of what
// was buffered since, dropping the oldest beyond MaxBuffered.
func (r *Recorder) write(ctx context.Context, batch []postroom.Event) error {
	err := r.sql.Record(ctx, batch)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		// Record kept nothing of batch: its array buffers the events to
		// come, so that a steady stream reuses one array per write in
		// flight rather than growing a new one each time.
		if r.spare == nil && cap(batch) > 0 {
			clear(batch[:cap(batch)])
			r.spare = batch[:0]
		}
		return nil
	}
	all := append(batch, r.buf...)
	if drop := len(all) - r.opts.MaxBuffered; drop > 0 {
		r.dropped += drop
		r.opts.Logger.Error("events: dropped events that could not be recorded", "dropped", drop, "total_dropped", r.dropped)
		all = all[drop:]
	}
	r.buf = all
	r.first = r.opts.Now()
	r.retryAt = r.first.Add(r.opts.FlushAfter)
	r.err = errors.Join(r.err, err)
	return err
}
