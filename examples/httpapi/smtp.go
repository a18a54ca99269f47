package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/transport"
)

// noTLSHint is what to do about a relay refused under -smtp-tls starttls
// for offering no STARTTLS, when it is a development one.
const noTLSHint = "a development relay (Mailpit, a local Postfix) speaks plaintext: run with -smtp-tls none for it"

// explainTLS adds noTLSHint to err when err is a relay refused for
// offering no STARTTLS (transport.ErrTLSUnavailable), keeping err in the
// chain for errors.Is and errors.As; other errors are returned as they are.
func explainTLS(err error) error {
	if !errors.Is(err, transport.ErrTLSUnavailable) {
		return err
	}
	return fmt.Errorf("%w; %s", err, noTLSHint)
}

// tlsHintTransport is the -smtp transport wrapped to log noTLSHint at the
// first message refused because the relay offers no STARTTLS: a relay
// that was unreachable when the server started was not checked then, and
// its recipients' reason alone ("relay offers no STARTTLS") does not say
// what to do. It logs once per server. Its Send returns next's error as
// it is, so the recipients' results are unchanged.
type tlsHintTransport struct {
	next   postroom.Transport
	logger *slog.Logger
	logged atomic.Bool
}

// withTLSHint returns next wrapped by a tlsHintTransport, keeping next's
// optional capability: when next is a postroom.Queuer, so is the
// wrapper, with next's answer.
func withTLSHint(next postroom.Transport, logger *slog.Logger) postroom.Transport {
	w := &tlsHintTransport{next: next, logger: logger}
	if q, ok := next.(postroom.Queuer); ok {
		return &queuingTLSHint{tlsHintTransport: w, q: q}
	}
	return w
}

// Send hands env to the wrapped transport.
func (w *tlsHintTransport) Send(ctx context.Context, env *postroom.Envelope) error {
	err := w.next.Send(ctx, env)
	if errors.Is(err, transport.ErrTLSUnavailable) && !w.logged.Load() && w.logged.CompareAndSwap(false, true) {
		w.logger.Error("SMTP relay refused: it offers no STARTTLS, which -smtp-tls starttls requires; "+noTLSHint, "error", err)
	}
	return err
}

// Unwrap returns the wrapped transport.
func (w *tlsHintTransport) Unwrap() postroom.Transport { return w.next }

// queuingTLSHint is withTLSHint's wrapper of a postroom.Queuer.
type queuingTLSHint struct {
	*tlsHintTransport
	q postroom.Queuer
}

// Queued returns the wrapped transport's Queued.
func (w *queuingTLSHint) Queued() bool { return w.q.Queued() }

// smtpTLSModes maps -smtp-tls to the transport's modes. "starttls" requires
// STARTTLS: a server that does not offer it is refused rather than sent
// the messages, and the password, in plaintext.
var smtpTLSModes = map[string]transport.TLSMode{
	"none":     transport.NoTLS,
	"starttls": transport.StartTLSRequired,
	"tls":      transport.ImplicitTLS,
}

// newSMTP builds the -smtp transport, logging to logger (dials, TLS, AUTH,
// retries, redials: never the password or a message's text). It dials
// nothing; newServer checks the relay once with Check.
func newSMTP(cfg config, logger *slog.Logger) (*transport.SMTP, error) {
	mode, ok := smtpTLSModes[cfg.SMTPTLS]
	if !ok {
		return nil, fmt.Errorf("-smtp-tls %q: want none, starttls or tls", cfg.SMTPTLS)
	}
	t, err := transport.NewSMTP(transport.SMTPOptions{
		Addr:      cfg.SMTP,
		TLS:       mode,
		TLSConfig: cfg.SMTPTLSConfig,
		Username:  cfg.SMTPUser,
		Password:  cfg.SMTPPassword,
		// -smtp-tls none with -smtp-user is an explicit choice, for a relay
		// on a trusted network; otherwise the password only goes under TLS.
		AllowInsecureAuth: mode == transport.NoTLS,
		Logger:            logger,
	})
	if err != nil {
		return nil, fmt.Errorf("-smtp: %w", err)
	}
	return t, nil
}
