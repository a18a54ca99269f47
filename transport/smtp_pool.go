package transport

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/postroom/postroom/delivery"
)

// pool holds an SMTP transport's connections. A connection belongs to
// whoever took it out of idle (under mu): a Send, the idle timer, or close.
type pool struct {
	dial  func(context.Context) (*smtpConn, error) // a new session, set up
	opts  *SMTPOptions                             // read only
	log   *smtpLog
	stats *smtpStats

	slots chan struct{} // one token per open connection: at most MaxConns
	wake  chan struct{} // a connection became idle; buffered MaxConns
	done  chan struct{} // closed by close
	gate  gate

	mu      sync.Mutex
	idle    []*smtpConn // most recently used last
	closed  bool
	busy    sync.WaitGroup // Sends in progress
	closing sync.WaitGroup // idle timers closing their connection
}

func (p *pool) init(opts *SMTPOptions, dial func(context.Context) (*smtpConn, error), log *smtpLog, stats *smtpStats) {
	p.dial, p.opts, p.log, p.stats = dial, opts, log, stats
	p.slots = make(chan struct{}, opts.MaxConns)
	p.wake = make(chan struct{}, opts.MaxConns)
	p.done = make(chan struct{})
	p.gate = gate{coolDown: opts.SetupCoolDown, now: time.Now, log: log}
}

// closedError is the error of a Send or Check after Close; its Text is
// what a Result's reason shows.
func closedError() error {
	return &delivery.DeliveryError{Text: "transport closed", Err: fmt.Errorf("%w: %w", ErrClosed, delivery.ErrTransportUnusable)}
}

// begin registers a Send, or fails after close.
func (p *pool) begin() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return closedError()
	}
	p.busy.Add(1)
	return nil
}

func (p *pool) end() { p.busy.Done() }

// get returns an idle connection (checked with NOOP if it has been idle a
// while) or a new one once a slot is free.
func (p *pool) get(ctx context.Context) (*smtpConn, error) {
	start := time.Now()
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, closedError()
		}
		var c *smtpConn
		if n := len(p.idle); n > 0 {
			c = p.idle[n-1]
			p.idle = p.idle[:n-1]
		}
		p.mu.Unlock()
		if c != nil {
			c.idleTimer.Stop()
			p.waited(ctx, time.Since(start))
			if hc := p.opts.HealthCheckAfter; hc > 0 && time.Since(c.idleSince) > hc {
				if err := c.noop(ctx); err != nil {
					p.discard(c, false)
					if ctx.Err() != nil {
						return nil, ctxError(ctx, err)
					}
					p.stats.redials.Add(1)
					p.log.redial(ctx, c, err)
					start = time.Now()
					continue
				}
			}
			return c, nil
		}
		select {
		case p.slots <- struct{}{}:
			return p.open(ctx, start, false)
		case <-p.wake:
		case <-p.done:
		case <-ctx.Done():
			return nil, &delivery.DeliveryError{Err: fmt.Errorf("waiting for a connection: %w", ctx.Err())}
		}
	}
}

// open dials a connection in the slot the caller took, through the
// gate; it frees the slot when that fails. start is when the caller began
// to wait, for the pool wait's record. check says the dial is Check's,
// which asks the server even during a cool-down.
func (p *pool) open(ctx context.Context, start time.Time, check bool) (*smtpConn, error) {
	probe, err := p.gate.enter(ctx, check)
	p.waited(ctx, time.Since(start))
	if err != nil {
		<-p.slots
		return nil, err
	}
	c, err := p.dial(ctx)
	p.gate.leave(probe, err)
	if err != nil {
		<-p.slots
		return nil, err
	}
	return c, nil
}

// fresh returns a newly dialed connection, never an idle one, for Check.
// When all MaxConns are taken it closes an idle connection to free a
// slot, or waits for a connection to become idle or a slot free.
func (p *pool) fresh(ctx context.Context) (*smtpConn, error) {
	start := time.Now()
	for {
		select {
		case p.slots <- struct{}{}:
			return p.open(ctx, start, true)
		default:
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, closedError()
		}
		var c *smtpConn
		if n := len(p.idle); n > 0 {
			c = p.idle[0] // the least recently used
			p.idle = slices.Delete(p.idle, 0, 1)
		}
		p.mu.Unlock()
		if c != nil {
			c.idleTimer.Stop()
			p.discard(c, true)
			continue
		}
		select {
		case p.slots <- struct{}{}:
			return p.open(ctx, start, true)
		case <-p.wake:
		case <-p.done:
		case <-ctx.Done():
			return nil, &delivery.DeliveryError{Err: fmt.Errorf("waiting for a connection: %w", ctx.Err())}
		}
	}
}

// put gives c back: idle if keep and it may serve more transactions,
// otherwise closed (with QUIT when it is still in a known state).
func (p *pool) put(c *smtpConn, keep bool) {
	if keep && (p.opts.MaxMessagesPerConn < 0 || c.uses < p.opts.MaxMessagesPerConn) {
		p.mu.Lock()
		if !p.closed {
			c.idleSince = time.Now()
			if c.idleTimer == nil {
				c.idleTimer = time.AfterFunc(p.opts.IdleTimeout, func() { p.expire(c) })
			} else {
				c.idleTimer.Reset(p.opts.IdleTimeout)
			}
			p.idle = append(p.idle, c)
			p.mu.Unlock()
			select {
			case p.wake <- struct{}{}:
			default:
			}
			return
		}
		p.mu.Unlock()
	}
	p.discard(c, keep)
}

// expire closes c after IdleTimeout, unless a Send or close took it first.
func (p *pool) expire(c *smtpConn) {
	p.mu.Lock()
	i := -1
	for j, ic := range p.idle {
		if ic == c {
			i = j
			break
		}
	}
	if i < 0 || p.closed {
		p.mu.Unlock()
		return
	}
	p.idle = append(p.idle[:i], p.idle[i+1:]...)
	p.closing.Add(1)
	p.mu.Unlock()
	defer p.closing.Done()
	p.discard(c, true)
}

// discard closes c, with QUIT when polite, and frees its slot.
func (p *pool) discard(c *smtpConn, polite bool) {
	if polite {
		c.quit()
	}
	c.close()
	<-p.slots
}

// close refuses new Sends, closes the idle connections, and waits for the
// Sends in progress (their connections are closed as they are put back).
func (p *pool) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.busy.Wait()
		p.closing.Wait()
		return
	}
	p.closed = true
	close(p.done)
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, c := range idle {
		c.idleTimer.Stop()
		p.discard(c, true)
	}
	p.busy.Wait()
	p.closing.Wait()
}
