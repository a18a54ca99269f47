package outbox

// The record of one batch while the Mailer sends it. A recipient is
// reserved (a write says its message may have been handed over) just
// before its message is handed to the transport, and its result is
// written soon after it is known, so that a run that dies leaves unknown
// only the messages it was handing over and the few whose outcome it had
// not written yet; the rest of its batch is not reserved, and the next
// run sends it.
//
// A message is reserved only once it holds one of the process's
// connections (Options.Connections, shared by all its jobs: the
// transport's own): a message waiting for a connection is not in doubt,
// and the next run sends it if the process dies. So the recipients
// reserved without a written result are at most the connections, plus
// the results known since the last write.
//
// A write per recipient would cost a database round trip each. So the
// writes are grouped as a database groups its commits: one write at a
// time, each reserving the messages waiting for it (each holding a
// connection), and carrying every result known since the last write; the
// next starts as soon as it ends. Against a relay slower than the
// database, a write reserves the messages that took the connections
// freed during the last one. Results are also written at least every
// flushInterval while the batch runs, and the rest when it ends.
//
// A transport that accepts a message in under fastTransport (one that
// keeps the messages itself, not a relay over a network) would still get
// a write per few messages, which costs more than its sending: it gets
// the rest of the batch in one reservation instead, and the next batch is
// reserved by the write of this one's last results, one write per batch.
// Its messages leave within moments of that write, and a process killed
// in those moments leaves up to a batch reserved and not handed over:
// the bound above holds for relays, not for such transports.
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
// lease, and the recipient is that run's to send, or the call was
// cancelled.
var errSuperseded = errors.New("outbox: a newer run of the job holds it, or its call was cancelled")

// handover is one batch's record while the Mailer sends it: recipient
// idx[p] is at position p of the Mailer's call. Its methods are safe for
// concurrent use.
type handover struct {
	l     *lease
	idx   []int32
	fast  *atomic.Bool  // the Worker's last verdict: its transport accepts in under fastTransport
	conns chan struct{} // the Outbox's connections: a message past BeforeSend holds one until its result

	mu         sync.Mutex
	waiting    []int         // positions whose message waits for a reservation not yet asked for
	writing    chan struct{} // not nil while a write is under way; closed when it ends
	err        error         // a reservation failed: nothing more is handed over
	superseded bool          // a newer run of the job holds the lease, or the call was cancelled
	asked      []bool        // position p's reservation was asked for
	next       int           // no position before it is left to ask for
	answered   []bool        // position p's reservation was asked for, and the write ended
	mine       []bool        // position p's recipient is reserved by this run
	conn       []bool        // position p holds one of conns
	done       []bool        // position p's result is known
	unsure     []int         // positions whose reservation write failed: reserved or not, never handed over
	written    []bool        // position p's result is written
	handedAt   []time.Time   // when position p's message was let through
	accepted   int           // messages accepted by the transport
	took       time.Duration // their total time from hand over to acceptance
	results    []postroom.Result
	unwritten  []int     // positions with a result not written yet
	lastWrite  time.Time // the end of the last write (or the batch's start)
}

func newHandover(l *lease, idx []int32, fast *atomic.Bool, conns chan struct{}) *handover {
	n := len(idx)
	return &handover{
		l: l, idx: idx, fast: fast, conns: conns, conn: make([]bool, n), handedAt: make([]time.Time, n),
		asked: make([]bool, n), answered: make([]bool, n), mine: make([]bool, n),
		done: make([]bool, n), written: make([]bool, n),
		results: make([]postroom.Result, n), lastWrite: time.Now(),
	}
}

// hooks are the Mailer's RunOptions for the batch: ctx is the job's.
func (h *handover) hooks(ctx context.Context) postroom.RunOptions {
	return postroom.RunOptions{
		BeforeSend: func(sctx context.Context, p int, _ string) error { return h.beforeSend(sctx, p) },
		OnResult:   func(p int, r postroom.Result) { h.onResult(ctx, p, r) },
		CallID:     h.l.args.CallID, // the events name the queued call
	}
}

// beforeSend lets position p's message go once it holds one of the
// process's connections (Options.Connections) and its recipient is
// reserved: at once when a write reserved it ahead, else by the next
// write, which it starts itself when no write is under way. A message
// waiting for a connection is not reserved: a process that dies leaves
// it to the next run, not unknown.
func (h *handover) beforeSend(ctx context.Context, p int) (err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	defer func() {
		if err != nil {
			h.release(p) // not handed over
		}
	}()
	if h.err != nil && !h.answered[p] {
		return h.err
	}
	h.mu.Unlock()
	select {
	case h.conns <- struct{}{}:
		h.mu.Lock()
		h.conn[p] = true
	case <-ctx.Done():
		h.mu.Lock()
		return ctx.Err()
	}
	if h.err != nil && !h.answered[p] {
		return h.err
	}
	if !h.asked[p] {
		h.waiting = append(h.waiting, p)
	}
	for !h.answered[p] {
		if h.err != nil && !h.asked[p] {
			h.drop(p)
			return h.err
		}
		ch := h.writing
		if ch == nil {
			h.write(ctx)
			continue
		}
		h.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		h.mu.Lock()
		if err := ctx.Err(); err != nil && !h.answered[p] {
			// Not handed over: if the write under way reserves it, its
			// result (deferred, not sent) is written as this run's.
			h.drop(p)
			return err
		}
	}
	switch {
	case h.mine[p]:
		h.handedAt[p] = time.Now()
		return nil
	case h.err != nil:
		return h.err
	}
	return errSuperseded
}

// reservedAhead marks every position reserved: the last batch's last
// write reserved them (see finish).
func (h *handover) reservedAhead() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for p := range h.idx {
		h.asked[p], h.answered[p], h.mine[p] = true, true, true
	}
	h.next = len(h.idx)
}

// release gives back position p's connection, if it holds one. It is
// called with h.mu held.
func (h *handover) release(p int) {
	if h.conn[p] {
		h.conn[p] = false
		<-h.conns
	}
}

// releaseAll gives back every connection the batch still holds: the
// Mailer's call has returned (or panicked), and every hook with it.
func (h *handover) releaseAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for p := range h.idx {
		h.release(p)
	}
}

// drop takes position p out of the positions waiting for a write.
func (h *handover) drop(p int) {
	if k := slices.Index(h.waiting, p); k >= 0 {
		h.waiting = slices.Delete(h.waiting, k, k+1)
	}
}

// onResult keeps position p's result, and writes the results known so
// far when no write is under way and the last is flushInterval old.
func (h *handover) onResult(ctx context.Context, p int, r postroom.Result) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.results[p] = r
	h.done[p] = true
	h.release(p)
	if !h.handedAt[p].IsZero() && (r.Status == postroom.StatusSent || r.Status == postroom.StatusQueued) {
		h.accepted++
		h.took += time.Since(h.handedAt[p])
		h.fast.Store(h.took < time.Duration(h.accepted)*fastTransport)
	}
	h.unwritten = append(h.unwritten, p)
	if h.writing == nil && time.Since(h.lastWrite) >= flushInterval {
		h.write(ctx)
	}
}

// write writes the results not yet written and reserves the positions
// waiting (and, for a fast transport, the rest of the batch), in one
// round trip, retried while the database is out of reach,
// for at most writeTimeout. It is called with h.mu held, and no write
// under way; it releases h.mu during the write.
func (h *handover) write(ctx context.Context) {
	pos := h.unwritten
	h.unwritten = nil
	w := h.l.newWrite()
	w.mine.grow(len(pos))
	for _, p := range pos {
		h.addResult(w, p)
	}
	ask := h.waiting
	h.waiting = nil
	if h.err != nil {
		ask = nil
	}
	if len(ask) > 0 {
		// A transport that fast gets the rest of the batch reserved at
		// once; against a slower one, a write reserves only the messages
		// waiting, each holding a connection, so that the recipients in
		// doubt are never more than the connections.
		free := 0
		if h.fast.Load() {
			free = len(h.idx)
		}
		for _, p := range ask {
			h.asked[p] = true
		}
		for ; free > 0 && h.next < len(h.idx); h.next++ {
			if !h.asked[h.next] && !h.done[h.next] {
				h.asked[h.next] = true
				ask = append(ask, h.next)
				free--
			}
		}
		for h.next < len(h.idx) && h.asked[h.next] {
			h.next++
		}
	}
	if w.mine.len() == 0 && w.open.len() == 0 && len(ask) == 0 {
		return
	}
	slices.Sort(ask) // positions, so recipients, in ascending order
	w.open.grow(len(ask))
	for _, p := range ask {
		w.open.add(h.idx[p], rowReserved, "", "", "")
	}
	ch := make(chan struct{})
	h.writing = ch
	h.mu.Unlock()

	wctx, cancel := context.WithTimeout(ctx, writeTimeout)
	var got putOutcome
	err := retry(wctx, func(ctx context.Context) error {
		var err error
		got, err = h.l.put(ctx, w)
		return err
	})
	cancel()

	h.mu.Lock()
	h.writing = nil
	close(ch)
	h.lastWrite = time.Now()
	for _, p := range ask {
		h.answered[p] = true
	}
	if err != nil {
		h.unwritten = append(pos, h.unwritten...) // for the next write, or finish
		if len(ask) > 0 {
			// The reservation may have been made all the same (the
			// answer lost): finish releases it.
			h.unsure = append(h.unsure, ask...)
			h.err = err
		}
		return
	}
	for _, p := range pos {
		h.written[p] = true
	}
	if got != putDone {
		// A newer run took the lease, or Cancel marked the call: nothing
		// more is this run's.
		h.superseded = true
		h.err = errSuperseded
		return
	}
	for _, p := range ask {
		h.mine[p] = true
	}
}

// addResult adds position p's result to w: every result of a recipient
// this run reserved (mine); of another, only a final one (open: the
// Mailer found it invalid without handing it over). A deferred recipient
// never reserved keeps its state as it is: the next run sends it.
func (h *handover) addResult(w *write, p int) {
	switch {
	case h.mine[p]:
		w.mine.addResult(h.idx[p], h.results[p])
	case h.results[p].Status != postroom.StatusDeferred:
		w.open.addResult(h.idx[p], h.results[p])
	}
}

// finish writes the results of the batch (Run's) not yet written,
// releases the recipients whose reservation write failed (their messages
// were never handed over), and reserves recipients next (the next batch,
// for a fast transport), in one write, retried while the database is out
// of reach, within ctx, and reports whether next is reserved. Every hook
// has returned by then.
func (h *handover) finish(ctx context.Context, results []postroom.Result, next []int32) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := h.l.newWrite()
	w.mine.grow(len(results))
	w.open.grow(len(next))
	for p, r := range results {
		h.results[p] = r
		if !h.written[p] {
			h.addResult(w, p)
		}
	}
	for _, p := range h.unsure {
		h.l.release(w, h.idx[p])
	}
	if h.err != nil {
		next = nil // no reservation after a failed one, nor for a superseded run
	}
	for _, i := range next {
		w.open.add(i, rowReserved, "", "", "")
	}
	if w.mine.len() == 0 && w.open.len() == 0 {
		return false, nil
	}
	var got putOutcome
	err := retry(ctx, func(ctx context.Context) error {
		var err error
		got, err = h.l.put(ctx, w)
		return err
	})
	switch {
	case err != nil:
		return false, err
	case got != putDone:
		h.superseded = true
		return false, nil
	}
	return len(next) > 0, nil
}
