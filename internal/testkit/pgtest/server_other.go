//go:build !linux

package pgtest

import "time"

// server is a local PostgreSQL; pgtest starts one on Linux only (Debian's
// layout, a parent-death signal). Elsewhere, set EnvURL.
type server struct{}

// start reports that no local server can be started here.
func start() (*server, error) { return nil, errNotInstalled }

func (*server) dsn(string) string { return "" }

func (*server) stop() error { return nil }

func (*server) version() int { return 0 }

func (*server) restart(time.Duration) error { return errNotInstalled }
