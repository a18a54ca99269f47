package transport

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/postroom/postroom/delivery"
)

// ErrCoolingDown: Send failed at once, without contacting the server,
// because a session setup was refused less than SMTPOptions.SetupCoolDown
// ago (AUTH refused, a certificate that does not verify, any other error
// wrapping delivery.ErrTransportUnusable from the setup). The error also
// wraps that refusal's error and delivery.ErrTransportUnusable.
var ErrCoolingDown = errors.New("transport: session setup refused recently; not asking the server again before SMTPOptions.SetupCoolDown has passed (SMTP.Check asks at once)")

// gate keeps a transport from asking a server that refuses the session
// setup again and again: relays lock the account, fail2ban bans the host.
// Until a setup has succeeded (at first, and after every refusal) one
// dial at a time runs, the probe, and the others wait for its outcome. A
// refusal starts a cool-down during which dials fail with ErrCoolingDown
// without contacting the server; after it, one probe decides again.
type gate struct {
	coolDown time.Duration // negative: none
	now      func() time.Time
	log      *smtpLog

	mu      sync.Mutex
	proven  bool          // a setup succeeded since the last refusal
	probing chan struct{} // while a probe runs; closed when it ends
	refused *SetupError   // the refusal that started the cool-down
	until   time.Time     // the cool-down's end
}

// enter is called before a dial. It says whether the dial is the probe
// (then leave must follow), or fails during a cool-down, unless check is
// set: Check's dial is a probe, cool-down or not, since an operator who
// runs Check while fixing the configuration wants the server's answer.
func (g *gate) enter(ctx context.Context, check bool) (probe bool, err error) {
	for {
		g.mu.Lock()
		if !check && g.refused != nil && g.coolDown >= 0 && g.now().Before(g.until) {
			se, until := g.refused, g.until
			g.mu.Unlock()
			return false, se.coolingDown(until)
		}
		if g.proven {
			g.mu.Unlock()
			return false, nil
		}
		if g.probing == nil {
			g.probing = make(chan struct{})
			g.mu.Unlock()
			return true, nil
		}
		wait := g.probing
		g.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return false, &delivery.DeliveryError{Err: fmt.Errorf("waiting for a connection: %w", ctx.Err())}
		}
	}
}

// leave records a dial's outcome: err is dial's error.
func (g *gate) leave(probe bool, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var se *SetupError
	switch {
	case err == nil:
		if g.refused != nil {
			g.log.usable(context.Background())
		}
		g.proven, g.refused = true, nil
	case errors.Is(err, delivery.ErrTransportUnusable) && errors.As(err, &se):
		g.proven, g.refused = false, se
		g.until = g.now().Add(g.coolDown)
		g.log.unusable(context.Background(), se, g.coolDown, g.until)
	}
	if probe {
		close(g.probing)
		g.probing = nil
	}
}

// coolingDown is the error of a dial refused until until because of e:
// e's step and reply, wrapping ErrCoolingDown and e's cause.
func (e *SetupError) coolingDown(until time.Time) *SetupError {
	var de *delivery.DeliveryError
	errors.As(e.Err, &de) // always: see SetupError.Err
	return &SetupError{Addr: e.Addr, Step: e.Step, Err: &delivery.DeliveryError{Code: de.Code, Enhanced: de.Enhanced, Text: de.Text,
		Err: fmt.Errorf("%w until %s: %w", ErrCoolingDown, until.Format(time.RFC3339), de.Err)}}
}
