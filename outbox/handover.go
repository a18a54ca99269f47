package outbox

// The record of one batch while the Mailer sends it. A recipient is
// reserved (its row says its message may have been handed over) just
// before its message is handed to the transport, and its result is
// written soon after it is known, so that a run that dies leaves unknown
// only the messages it was handing over and the few whose outcome it had
// not written yet; the rest of its batch has no row, and the next run
// sends it.
//
// A write per recipient would cost a database round trip each. So a
// write reserves a group of the next recipients at once, and carries
// every result known since the last write. The group is as large as the
// most messages the job has had in flight at once (the Mailer's
// Concurrency, once its workers are all busy): a write every that many
// recipients, and a crash leaves unknown at most the messages in flight
// and fewer than that many reserved and not yet handed over. A transport
// that accepts a message in under fastTransport (one that keeps the
// messages itself, not a relay over a network) gets the rest of the
// batch in one group, so that it costs one reservation per batch, as a
// batch reserved whole did. Results are written at least every
// flushInterval while the batch runs, and the rest when it ends.
//
// Every write is made by a goroutine of the Mailer's call (in
// RunOptions.BeforeSend and OnResult), one at a time: none outlives Run.

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/postroom/postroom"
)

// flushInterval is the longest a known result waits to be written while
// its batch runs (the last ones are written when the batch ends).
const flushInterval = 100 * time.Millisecond

// fastTransport is the mean time from handing a message over to its
// acceptance under which a job reserves the rest of its batch at once.
const fastTransport = time.Millisecond

// errSuperseded keeps a message back: a newer run of its job holds the
// lease, and the recipient is that run's to send.
var errSuperseded = errors.New("outbox: a newer run of the job holds it")

// handover is one batch's record while the Mailer sends it: recipient
// idx[p] is at position p of the Mailer's call. Its methods are safe for
// concurrent use.
type handover struct {
	l      *lease
	idx    []int32
	emails []string
	group  *atomic.Int64 // the Worker's last group size, for the next batch's first

	mu         sync.Mutex
	reserved   int           // positions before it have been asked for reservation
	want       int           // 1 + the highest position waiting for its reservation
	writing    chan struct{} // not nil while a write is under way; closed when it ends
	err        error         // a reservation failed: nothing more is handed over
	superseded bool          // a newer run of the job holds the lease
	mine       []bool        // position p's recipient is reserved by this run
	handed     []bool        // position p's message was let through to the transport
	written    []bool        // position p's result is written
	results    []postroom.Result
	unwritten  []int         // positions with a result not written yet
	lastWrite  time.Time     // the end of the last write (or the batch's start)
	handedAt   []time.Time   // when position p's message was let through
	accepted   int           // messages accepted by the transport
	took       time.Duration // their total time from hand over to acceptance
	inFlight   int           // messages let through whose result is not known
	peak       int           // the most in flight at once
}

func newHandover(l *lease, idx []int32, emails []string, group *atomic.Int64) *handover {
	n := len(idx)
	return &handover{
		l: l, idx: idx, emails: emails, group: group,
		mine: make([]bool, n), handed: make([]bool, n), written: make([]bool, n), handedAt: make([]time.Time, n),
		results: make([]postroom.Result, n), lastWrite: time.Now(),
	}
}

// hooks are the Mailer's RunOptions for the batch: ctx is the job's.
func (h *handover) hooks(ctx context.Context) postroom.RunOptions {
	return postroom.RunOptions{
		BeforeSend: func(sctx context.Context, p int, _ string) error { return h.beforeSend(sctx, p) },
		OnResult:   func(p int, r postroom.Result) { h.onResult(ctx, p, r) },
	}
}

// beforeSend lets position p's message go once its recipient is
// reserved, reserving the next group when it is not.
func (h *handover) beforeSend(ctx context.Context, p int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.want = max(h.want, p+1)
	for p >= h.reserved {
		if h.err != nil {
			return h.err
		}
		if ch := h.writing; ch != nil {
			h.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
			}
			h.mu.Lock()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			continue
		}
		h.write(ctx)
	}
	if !h.mine[p] {
		return errSuperseded
	}
	h.handed[p] = true
	h.handedAt[p] = time.Now()
	h.inFlight++
	h.peak = max(h.peak, h.inFlight)
	return nil
}

// onResult keeps position p's result, and writes the results known so
// far when the last write is flushInterval old.
func (h *handover) onResult(ctx context.Context, p int, r postroom.Result) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.results[p] = r
	h.unwritten = append(h.unwritten, p)
	if h.handed[p] {
		h.inFlight--
		if r.Status == postroom.StatusSent || r.Status == postroom.StatusQueued {
			h.accepted++
			h.took += time.Since(h.handedAt[p])
		}
	}
	if h.writing == nil && time.Since(h.lastWrite) >= flushInterval {
		h.write(ctx)
	}
}

// write writes the results not yet written and, when a message waits
// for its reservation, reserves the next group, in one round trip,
// retried while the database is out of reach, for at most writeTimeout.
// It is called with h.mu held, which it releases during the write.
func (h *handover) write(ctx context.Context) {
	pos := h.unwritten
	h.unwritten = nil
	var out outcomes
	for _, p := range pos {
		if h.keep(p) {
			out.add(h.idx[p], h.emails[p], h.results[p])
		}
	}
	from, to := h.reserved, h.reserved
	if h.want > h.reserved {
		to = min(len(h.idx), max(h.want, h.reserved+h.nextGroup()))
	}
	if out.len() == 0 && from == to {
		return
	}
	ch := make(chan struct{})
	h.writing = ch
	h.mu.Unlock()

	wctx, cancel := context.WithTimeout(ctx, writeTimeout)
	var got []int32
	err := retry(wctx, func(ctx context.Context) error {
		var err error
		got, err = h.l.save(ctx, out, h.idx[from:to], h.emails[from:to])
		return err
	})
	cancel()

	h.mu.Lock()
	h.writing = nil
	close(ch)
	h.lastWrite = time.Now()
	if err != nil {
		h.unwritten = append(pos, h.unwritten...) // for the next write, or finish
		if from < to {
			h.err = err
		}
		return
	}
	for _, p := range pos {
		h.written[p] = true
	}
	if from == to {
		return
	}
	h.reserved = to
	for _, i := range got {
		h.mine[h.position(i, from, to)] = true
	}
	if len(got) < to-from {
		// A newer run took the lease (it reserves what it finds
		// without a row): nothing more is this run's.
		h.superseded = true
		h.err = errSuperseded
	}
}

// nextGroup is how many recipients the next reservation takes beyond
// the ones waiting: the rest of the batch when the transport accepts
// messages in under fastTransport, else the most messages in flight at
// once; before any message of the batch is accepted, the last batch's.
func (h *handover) nextGroup() int {
	g := int(h.group.Load())
	switch {
	case h.accepted > 0 && h.took < time.Duration(h.accepted)*fastTransport:
		g = len(h.idx)
	case h.accepted > 0 || h.peak > 0:
		g = h.peak
	}
	g = min(max(g, 1), len(h.idx))
	h.group.Store(int64(g))
	return g
}

// position is the position of recipient i among positions [from, to)
// (a batch's recipients are in ascending order).
func (h *handover) position(i int32, from, to int) int {
	p, _ := slices.BinarySearch(h.idx[from:to], i)
	return from + p
}

// keep reports whether position p's result is to be written: every
// result of a recipient this run reserved; of another, only a final one
// (the Mailer found it invalid without handing it over). A deferred
// recipient never reserved keeps its row as it is, or none: the next run
// sends it.
func (h *handover) keep(p int) bool {
	return h.mine[p] || h.results[p].Status != postroom.StatusDeferred
}

// finish writes the results of the batch (Run's) not yet written,
// retried while the database is out of reach, within ctx. Every hook
// has returned by then.
func (h *handover) finish(ctx context.Context, results []postroom.Result) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out outcomes
	for p, r := range results {
		h.results[p] = r
		if !h.written[p] && h.keep(p) {
			out.add(h.idx[p], h.emails[p], r)
		}
	}
	if out.len() == 0 {
		return nil
	}
	return retry(ctx, func(ctx context.Context) error { return h.l.record(ctx, out) })
}
