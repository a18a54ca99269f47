package transport

import "time"

// SetClock makes t's cool-down read the time from now.
func SetClock(t *SMTP, now func() time.Time) { t.pool.gate.now = now }
