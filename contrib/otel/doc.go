// Package postroomotel reports what a postroom Mailer does as
// OpenTelemetry traces and metrics: a span per call and per message handed
// to the transport, and counters, histograms and gauges of messages,
// bytes, latency and the outbox's queue.
//
// It is a module of its own, github.com/postroom/postroom/contrib/otel,
// so that an application that does not use OpenTelemetry does not get it
// in its module graph: postroom itself imports no OpenTelemetry package.
// Nothing of postroom is tagged yet, so the module's go.mod requires
// github.com/postroom/postroom at v0.0.0 with a replace directive to the
// repository's root (../..); an application that uses it from outside the
// repository replaces github.com/postroom/postroom with the commit or
// folder it builds against, until a tagged release lets go.mod name a
// version.
//
// # Use
//
// New takes the providers (nil: the global ones of package otel) and
// returns a Telemetry whose methods wrap each part:
//
//	tel, err := postroomotel.New(postroomotel.Options{})
//	m, err := postroom.New(tel.Transport(smtp), postroom.Options{
//		Auth:    auth,
//		OnEvent: tel.OnEvent,
//	})
//	results, err := tel.Run(ctx, m, postroom.OpSend, call, postroom.RunOptions{})
//	reg, err := tel.ObserveOutbox(ob) // the queue's gauges; reg.Unregister() when done
//	client, err := ob.NewClient(&river.Config{Middleware: []rivertype.Middleware{tel.RiverMiddleware()}})
//
// # Spans
//
// Transport's wrapper makes a span per message handed over, named "send",
// of kind producer, with the messaging semantic conventions' attributes
// where they fit: messaging.system (Options.System, "smtp" by default),
// messaging.operation.name and messaging.operation.type ("send"),
// messaging.message.id (the message's send id, also the local part of its
// Message-ID) and messaging.message.body.size (the whole message's
// octets), and error.type when the hand-over failed (the outcome below).
// Beyond the conventions it adds:
//
//   - postroom.outcome: sent, partial (some bcc addresses refused),
//     permanent, uncertain or temporary (a DeliveryError's kind, or any
//     other error), unusable (ErrTransportUnusable) or canceled (ctx).
//   - postroom.envelope.recipients: the envelope's addresses (the
//     recipient and its bcc copies).
//   - postroom.smtp.code and postroom.smtp.enhanced: the next hop's reply
//     code and RFC 3463 status of a failed hand-over, when known.
//
// The span's status is Error for any outcome but sent and partial. No
// address, subject or reply text goes into a span: they are personal data
// and unbounded.
//
// Run and Send make a span per call, named by the operation
// ("message.send", "message.send_template"), of kind internal, with
// postroom.operation, postroom.account_id, messaging.batch.message_count
// (the call's recipients) and postroom.recipients.STATUS (sent, queued,
// invalid, rejected, deferred, unknown) for each status some recipient
// ended with. The transport's spans of the call are its children. A call
// refused as a whole has status Error and error.type "refused".
//
// River's own spans and metrics for the outbox's jobs come from
// rivercontrib/otelriver: RiverMiddleware returns its middleware with
// Options's providers, for the River client's config.
//
// # Metrics
//
// The conventions' messaging client metrics, with messaging.system and
// messaging.operation.name, error.type when failed, and postroom.outcome:
//
//   - messaging.client.operation.duration (histogram, s): the transport's
//     latency per message.
//   - messaging.client.sent.messages (counter, {message}): messages handed
//     to the transport.
//
// Beyond them:
//
//   - postroom.message.bytes (counter, By): the octets of the messages
//     handed over, with postroom.outcome.
//   - postroom.recipients (counter, {recipient}): the recipients of the
//     calls run through Run and Send, by postroom.status and postroom.reason
//     (the Result's reason code, empty when none).
//   - postroom.events (counter, {event}): the events given to OnEvent (every
//     final result that is an event, outbox or not), by postroom.event (send,
//     deferral, hard_bounce, soft_bounce, reject) and postroom.reason.
//   - postroom.outbox.waiting (gauge, {recipient}) and
//     postroom.outbox.oldest_age (gauge, s): ObserveOutbox's reading of
//     outbox.Outbox.Stats at each collection: the recipients waiting and
//     the age of the oldest.
//
// # Large calls
//
// A call run through Run with more than Options.MessageSpanLimit
// recipients (100 by default) gets its call span and no span per
// message, and its messages' counts, octets and events are added up in
// the call and recorded once when it ends, with one message in 16 timed
// for the latency histogram (its count is then a sixteenth of the
// messages; messaging.client.sent.messages has them all). A sampled span
// or an SDK measurement per message costs about what the Mailer's own
// work for a message does: BenchmarkOverhead measures the adapter on a
// call of 25,000 recipients and of one.
//
// # Concurrency
//
// A Telemetry is safe for concurrent use and never changes after New;
// its wrappers take no lock per message outside a large call's event
// tally, and allocate nothing per message (the attribute sets are made
// once per outcome, status or reason and kept).
package postroomotel
