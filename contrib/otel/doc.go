// Package postroomotel reports what a postroom Mailer does as
// OpenTelemetry traces and metrics: a span per call (and, outside a call
// run through Run, per message handed to the transport), and counters,
// a histogram and gauges of messages, bytes, latency and the outbox's
// queue.
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
// Run and Send make a span per call, named by the operation
// ("message.send", "message.send_template"), of kind producer: a call is
// a batch send in the messaging semantic conventions' terms, and its
// span has their attributes where they fit, messaging.system
// (Options.System, "smtp" by default), messaging.operation.name and
// messaging.operation.type ("send") and messaging.batch.message_count
// (the call's recipients). Beyond the conventions it has
// postroom.account_id and postroom.recipients.STATUS (sent, queued,
// invalid, rejected, deferred, unknown) for each status some recipient
// ended with. A call refused as a whole has status Error and error.type
// "refused"; a call that stopped early (ctx done, the transport
// unusable) has status Error and error.type canceled or the transport's
// outcome (below). The attributes are set when the span ends, in one
// SetAttributes: a sampler sees the name and kind only, and a span that
// is not sampled costs the SDK's Start and nothing more.
//
// The call's span stands for the transport's session of the call, its
// hand-overs: by default they get no span each, and their outcomes,
// octets and latency go to the metrics (a sampled span costs several
// times all of the adapter's metrics for a message; see
// BenchmarkOverhead). Options.MessageSpanLimit gives each message of a
// call of up to that many recipients a span of its own, a child of the
// call's. An outbox job is a session too, with RiverMiddleware: its
// messages get no span each, and River's span of the job gets
// postroom.messages.OUTCOME, the number of messages handed over with
// each outcome (below) that some message had. A Send of the Transport
// wrapper in neither (a Mailer's Send or Run called directly) gets a
// span of its own. A message's span is named "send", of kind producer, with
// messaging.system, messaging.operation.name and messaging.operation.type
// ("send"), messaging.message.id (the message's send id, also the local
// part of its Message-ID) and messaging.message.body.size (the whole
// message's octets), and error.type when the hand-over failed. Beyond
// the conventions it adds:
//
//   - postroom.outcome: sent, partial (some bcc addresses refused),
//     permanent, uncertain or temporary (a DeliveryError's kind, or any
//     other error), unusable (ErrTransportUnusable) or canceled (ctx).
//   - postroom.envelope.recipients: the envelope's addresses (the
//     recipient and its bcc copies).
//   - postroom.smtp.code and postroom.smtp.enhanced: the next hop's reply
//     code and RFC 3463 status of a failed hand-over, when known.
//
// Its status is Error for any outcome but sent and partial. No address,
// subject or reply text goes into a span: they are personal data and
// unbounded.
//
// River's own spans and metrics for the outbox's jobs come from
// rivercontrib/otelriver: RiverMiddleware returns its middleware with
// Options's providers, for the River client's config, and adds the
// sessions of the outbox's jobs.
//
// # Metrics
//
// The conventions' messaging client metrics, with messaging.system and
// messaging.operation.name, error.type when failed, and postroom.outcome:
//
//   - messaging.client.operation.duration (histogram, s): the transport's
//     latency per message. A message with a span of its own is timed;
//     of the messages of a call run through Run or of an outbox job, the
//     first (so that a run of one call shows a latency) and one in 16 of
//     the others (those whose send id ends in 0; every one with
//     Options.TimeEveryMessage), so that the histogram's count is then
//     about a sixteenth of them; messaging.client.sent.messages has them
//     all.
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
// The four counters are observable counters: the Telemetry keeps their
// sums in atomic integers and a callback registered by New reports them
// at each collection, cumulative since New (the SDK makes deltas of them
// for a reader that asks for deltas; two Telemetries of one meter
// provider add up). A count costs an atomic add instead of the SDK's
// attribute lookup and aggregation, and a call run through Run (an
// outbox job) adds its counts up in the call (the job) and adds them to
// the Telemetry's once, when it ends. Observable counters have no exemplars; the latency histogram's
// measurements under Run carry none either (their span would be the
// call's, of many messages alike), those of a message with a span of its
// own link to it. postroom.recipients and postroom.events keep at most
// 256 (status or event type, reason) pairs; past them, an OnEvent of an
// application's own with reasons of its own is counted under
// otel.metric.overflow=true, as the SDK does past an instrument's
// cardinality limit.
//
// # Overhead
//
// BenchmarkOverhead runs a call of 25,000 recipients and one of a single
// recipient with and without the adapter, its spans sampled all or one
// in a hundred, through the SDK's batch span processor into a no-op
// exporter, and beside them plain inside one bare span of the SDK: the
// floor of a span per call, which the adapter cannot go under with every
// span sampled. docs/OBSERVABILITY.md in the repository has the figures.
//
// # Concurrency
//
// A Telemetry is safe for concurrent use and never changes after New,
// but for its counters (atomic integers) and its label table (replaced
// whole, under a lock, when a label is new). Its wrappers take a lock
// only for a call's events other than sends without a reason, and
// allocate nothing per message; Run allocates one value per call, the
// call's state and context together, beside the SDK's span.
package postroomotel
