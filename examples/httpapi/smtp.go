package main

import (
	"fmt"
	"log/slog"

	"github.com/postroom/postroom/transport"
)

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
