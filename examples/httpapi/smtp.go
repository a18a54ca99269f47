package main

import (
	"errors"

	"github.com/postroom/postroom"
)

// smtpTransport is a Transport with a connection pool to release.
type smtpTransport interface {
	postroom.Transport
	Close() error
}

// newSMTP builds the -smtp transport.
func newSMTP(cfg config) (smtpTransport, error) {
	return nil, errors.New("-smtp: the SMTP transport is not available yet")
}
