// Package outbox sends postroom calls later, retries them later, and
// spreads them over every instance: durable sending on River
// (github.com/riverqueue/river), on one SQLite file for one application
// process or on PostgreSQL for any number of instances, through package
// sqldb (sqlitedb.Open, pgxdb.New).
//
// Enqueue checks a call as Mailer.Run would (a call refused as a whole
// gets Send's errors and never enters the queue), stores it once, and
// inserts its River jobs in the caller's transaction: if the transaction
// commits, every recipient gets exactly one final result; if it rolls
// back, nothing is ever sent. A call becomes one job per Options.JobSize
// recipients (500 by default), inserted in one batch, so a large call runs
// on the workers of every instance at once. Jobs carry the call's id and a
// range of recipients, never a copy of the call.
//
// The Worker, registered on each instance's River client, sends a job's
// recipients through the Mailer in batches of Options.BatchSize: it
// reserves each recipient just before handing its message over, and
// writes the results while the batch runs, a few writes per batch, each
// one row of arrays (postroom_outbox_results), not a row per recipient;
// the view postroom_outbox_recipients shows each recipient's state. See
// Worker for what happens on a crash, a deferral and a refusal. Status reads a call's progress and, once it is
// done, its results; with Options.Events (an events.SQL, through the
// one-method LaterEvents), also what came back after its messages left,
// the latest bounce, complaint, unsubscribe or delay notice of each
// (postroom.CallStatus.Later).
//
// # Prepared once per job run
//
// A job's run prepares its call (postroom.Mailer.Prepare: authentication,
// validation, compiling, layout) once, at its first batch, from the
// call's body (decoded once per process, and kept in a cache bounded by
// Options.CachedCalls and Options.CachedCallBytes) and the job's
// recipients. Each batch is one run of the prepared call
// (postroom.Prepared.RunSome), with a Date, send ids and signatures of its
// own. A 25,000-recipient call is thus prepared 50 times (once per job of
// 500), not 251 times (once per batch of 100). Preparing the whole call
// once per process was measured too, and cost more: each process decoded,
// checked and kept every recipient of the call.
//
// The call's key is checked once per job run, when the run prepares the
// call (the Mailer's Options.Auth), not before each batch: a key revoked
// mid-call lets the job runs under way finish, and refuses every run that
// starts after it (see Worker). A stored template edited or deleted mid-call
// reaches the job runs that start after the edit.
//
// # Statuses
//
// A recipient's final status is one of postroom's: sent (or queued, for a
// Queuer transport), invalid, rejected, unknown. Three reason codes say
// what the outbox did: postroom.ReasonInterrupted (unknown: a run died
// between handing a batch over and writing its results; idempotency.Run
// reports the same case with the same code), and the outbox's own
// ReasonExpired (rejected: still deferred after Options.MaxAge) and
// ReasonGaveUp (rejected: not sent, and its job is ending: its runs
// failed Options.MaxAttempts times, or it was cancelled). A recipient
// whose message the relay deferred (4xx, a connection failure) is retried
// by its job with Options.Backoff; rejected (5xx), invalid and unknown
// are never retried.
//
// Every recipient of a committed call gets a final result: a job that
// River is about to end (its attempts used up, cancelled while it runs,
// its stored rows unreadable) first gives up its recipients (see
// Worker). What escapes that is listed in "What it does not do".
//
// # Engines
//
// On SQLite, the file the application's own tables may live in, opened
// once by the process (sqlitedb.Open), the application enqueues in its
// own database/sql transaction, begun on the file's *sql.DB:
//
//	db, _ := sqlitedb.Open(ctx, "app.db", sqlitedb.Options{})
//	_ = outbox.Migrate(ctx, db)
//	ob, _ := outbox.New(mailer, db, outbox.Options{})
//	client, _ := ob.NewClient(nil) // River's riversqlite driver on db.SQL()
//	_ = client.Start(ctx)
//
//	tx, _ := db.SQL().BeginTx(ctx, nil)
//	// ... the application's writes in tx
//	id, err := ob.Enqueue(ctx, sqlitedb.WrapTx(tx), postroom.OpSend, call, outbox.EnqueueOptions{})
//	_ = tx.Commit()
//
// On PostgreSQL, in its pgx transaction on its pool:
//
//	db := pgxdb.New(pool)
//	_ = outbox.Migrate(ctx, db)
//	ob, _ := outbox.New(mailer, db, outbox.Options{})
//	client, _ := ob.NewClient(nil) // River's riverpgxv5 driver on pool
//
//	tx, _ := pool.Begin(ctx)
//	id, err := ob.Enqueue(ctx, pgxdb.WrapTx(tx), postroom.OpSend, call, outbox.EnqueueOptions{})
//	_ = tx.Commit(ctx)
//
// A transaction of the DB's own Begin does as well (sqldb.BeginFunc).
// The outbox hands the engine's transaction under the wrapper to River's
// driver, so the call's rows and its jobs commit or roll back together.
// An application with its own River client builds it on the same driver
// (riversqlite.New(db.SQL()), riverpgxv5.New(pool)) and adds the Worker.
//
// What SQLite cannot do is refused, never done wrong. A SQLite file
// serves one process: sqlitedb.Open refuses a file another process holds
// with an *sqlitedb.InUseError that says to use PostgreSQL, so two
// instances, or a worker process beside the application (as
// PostgreSQL's deployments run them), need PostgreSQL. Inside the
// process, every statement runs on the file's one connection, one at a
// time: while the application's transaction is open, the outbox's
// workers and River wait for it (keep it short), and nothing may use the
// file outside it. So Enqueue, which checks a call before it writes,
// cannot read a template store on the same file (a message.send_template
// call's templates) within the application's transaction: keep such
// templates in a store of their own (templatestore.Dir, Memory, or
// PostgreSQL), or enqueue them through AccountCalls, whose Enqueue checks the
// call before its transaction begins. River on SQLite stores its times in
// milliseconds.
//
// # Schema
//
// Migrate applies River's migrations (rivermigrate, with the engine's
// River driver) and the outbox's own (embedded: sql/*.sql on PostgreSQL,
// under an advisory lock; sql/sqlite/*.sql on SQLite, where what
// PostgreSQL keeps in arrays is JSON text).
//
// # What it does not do
//
// It does not make a delivery exactly-once: a recipient whose message
// was being handed over when its process died, or whose result it had
// not written yet, is reported unknown: at most the messages in flight on
// the process's connections (Options.Connections) and the results known
// since the last writes (with a transport that accepts a message in
// under a millisecond, at most a batch per job). It
// does not start River: the application runs a
// River client (its own, or one from NewClient). It does not freeze a
// stored template: Enqueue reads it, to check the call, and each process
// reads it again when it prepares the call to send it (once, then kept in
// its cache of prepared calls), so the version sent is the one stored
// then. It deletes nothing: DeleteBefore removes old calls when the
// application calls it.
//
// It does not write the Mailer's events: its workers hand each message to
// the Mailer, whose Options.OnEvent gets the send event that package
// inbound later looks up to prove a bounce. With an events.Recorder
// there, the application flushes it on a timer while its River client
// runs (every second in examples/httpapi): the Recorder writes on its own
// only at a later event, and a job's last sends may have none after them.
// So flushed, a send is written within about a second of its hand-over,
// inside inbound.Options.SendWait (5 seconds), and a bounce that a local
// relay returns at once is acted on at its first delivery.
//
// It cannot give up the recipients of a job that River ends without
// running the Worker: a job cancelled with River's Client.JobCancel while
// it waits (not while it runs), a job whose arguments no longer decode
// (a river_job row edited by hand), a job of a queue worked by a client
// without the Worker. Nor those of a job whose process dies during the
// last attempt itself (two writes). Their recipients stay counted as
// queued in Status until DeleteBefore removes the call.
//
// # HTTP
//
// AccountCalls is the Outbox as the Async of an httpapi.Handler: Prefer:
// respond-async enqueues, GET /api/1.0/calls/{id} answers Status and
// Waiting, and calls.list, calls.cancel and calls.retry steer an
// account's own calls (httpapi.AsyncSteering). Status
// returns the root package's postroom.CallStatus, the one type of a
// call's progress, so this package does not import httpapi: a worker
// binary links no HTTP handler, html/template or preview page.
//
// The root package postroom does not import this package; of postroom's
// packages, only this one imports River.
package outbox
