package postroomotel

// River's spans and metrics of the outbox's jobs, from River's own
// OpenTelemetry middleware.

import (
	"github.com/riverqueue/river/rivertype"
	"github.com/riverqueue/rivercontrib/otelriver"
)

// RiverMiddleware returns rivercontrib/otelriver's middleware with the
// Telemetry's providers: a span per job inserted and per job worked
// (river.insert_many, river.work/postroom_outbox_send), with River's
// metrics. Put it in the River client's config, for instance the one
// given to outbox.Outbox.NewClient; the Mailer's spans inside a job's
// work (with a Transport wrapper) are children of the job's span.
func (t *Telemetry) RiverMiddleware() rivertype.Middleware {
	return otelriver.NewMiddleware(&otelriver.MiddlewareConfig{
		TracerProvider: t.opts.TracerProvider,
		MeterProvider:  t.opts.MeterProvider,
	})
}
