// Package events keeps what happened to the messages postroom sent: a log
// of postroom.Event values (queued, send, deferral, hard_bounce,
// soft_bounce, spam, unsub, reject) and, drawn from its send events, the record of each
// message that left, so that a bounce arriving later can be proven to be
// about a message postroom sent and tied to that message's recipient.
//
// Two stores:
//
//   - Memory keeps the most recent sends in memory, bounded in number and
//     age, fed by Memory.OnEvent as postroom.Options.OnEvent. It keeps no
//     event log and nothing across restarts; it suits one process and
//     tests.
//   - SQL keeps every event in one table (postroom_events, created by
//     Migrate) of a database behind the sqldb seam: PostgreSQL
//     (sqldb/pgxdb), for any number of instances, or SQLite
//     (sqldb/sqlitedb), for one process. It is written in batches by a
//     Recorder (one CopyFrom per batch, never one INSERT per recipient)
//     and read back by account with a cursor (SQL.List), by send id
//     (SQL.Lookup), or as the latest later event of many sends at once
//     (SQL.After: a bounce that came back after a queued call's result).
//
// Both are an Activity too: each message's record drawn from its events
// (account, call id, address, sender, rendered subject, templates, list,
// state, when it was first tried, and its timeline: queued, deferrals
// with their reason and reply, the send or reject, and the bounces,
// complaints and unsubscribes that came back), found with Search (by
// address in any case, send id, call id, list, state and time, newest
// first, paged by cursor) or Info (by send id). A Message never holds a
// body.
//
// # Retention
//
// Memory keeps MemoryOptions.MaxSends messages no older than
// MemoryOptions.Retention. SQL keeps SQLOptions.Retention (30 days by
// default) through SQL.Rotate, run from the application's schedule
// (hourly is plenty): on PostgreSQL the table is partitioned by day, and
// Rotate creates the days ahead and drops whole the days older than the
// retention; on SQLite it deletes the old rows in batches. On PostgreSQL
// an event takes about 335 bytes with its indexes (docs/BENCHMARKS.md,
// events without a call, sender or subject), plus about twice the length
// of its call id and once that of its sender and subject: a sender of 10
// million messages a day keeps 30 days in the order of 100 to 150 GB.
//
// # Message bodies, an option off by default
//
// By default no message body is kept. Setting SQLOptions.KeepBodies (or
// MemoryOptions.KeepBodies) and wrapping the Mailer's transport in
// KeepBodies keeps each accepted message's complete rendered body for
// that long, by send id (postroom_event_bodies on SQL; at most
// MemoryOptions.MaxBodies in a Memory); Body reads it back for the
// message's account only, and SQL.Rotate deletes the older ones. Each
// body is written synchronously, one INSERT per message as it is sent.
//
// The cost is large (docs/BENCHMARKS.md, "Keeping message bodies"): the
// benchmark workload's message (an order confirmation with inline images
// and a PDF attachment) renders to 139,102 bytes, which PostgreSQL stores
// compressed in about 39,700 bytes with its index, SQLite uncompressed in
// about 140,300: at 10 million messages a day, about 400 GB a day kept
// on PostgreSQL (1.4 TB on SQLite) for each day of KeepBodies. The write
// took 1.1 to 2.3 ms per message on a 2-core machine, against 11 to 25 µs
// per message for the rest of the send: sending with the option on is
// bound by the database's writes.
//
// Both satisfy Sends, the lookup package inbound uses to prove a bounce
// and to learn the list of the message it is about (Send.List: a
// complaint about a list message is not one about a receipt). Every
// event keeps its list (postroom.Event.List); SQL reads it back wherever
// it reads events.
//
// # Batching and the window it opens
//
// A Recorder is the postroom.Options.OnEvent of a Mailer: it buffers the
// events and writes them when RecorderOptions.FlushEvents are buffered,
// when the first buffered event is older than RecorderOptions.FlushAfter
// (checked when the next event arrives), and when the application calls
// Flush, which it should do after each Run, and on a timer (every second)
// while sends may happen outside a Run it waits for (an outbox's
// workers). No goroutine of its own runs between calls. Until a send
// event is written, a bounce for that message finds no record: the window
// is bounded by FlushEvents and FlushAfter at the next event, and by the
// application's Flush. Package inbound waits for such a send, up to
// inbound.Options.SendWait (5 seconds), so that a bounce returned at once
// is acted on at its first delivery; a send written later still than
// that has its bounce answered "try again later" for a grace period
// (inbound.Options.UnknownSendGrace, 10 minutes) and taken on the
// bouncing server's retry.
//
// This package does not deliver events anywhere (no webhook service): an
// application forwards them with its own job queue, reading SQL.List.
package events
