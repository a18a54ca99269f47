// Package idempotency makes postroom calls idempotent: a call made with a
// key sends at most once, however often the client retries it and
// whichever instance the retry reaches, and a retry after a crash mid-call
// sends only to the recipients the crash left without a result.
//
// Run wraps Mailer.Run. It claims the key (scoped by the call's account)
// in a Store, records each recipient durably just before its message is
// handed to the transport (RunOptions.BeforeSend) and again with its final
// result as soon as it has one (RunOptions.OnResult), and returns the
// recorded results to a retry with the same key and payload. A recipient
// that was handed over when the crash happened comes back unknown (reason
// interrupted), never sent twice blindly. The same key with another
// payload is ErrConflict; the same key while its call runs is
// ErrInProgress (Run does not wait; Store.Wait does, for callers that
// prefer to).
//
// # Stores
//
// Memory keeps records in one process. SQL keeps them in a database
// behind package sqldb: PostgreSQL (sqldb/pgxdb over the application's
// *pgxpool.Pool, shared with the other stores and package outbox), for
// many instances, or SQLite (sqldb/sqlitedb, one file), for one process.
// Migrate creates its tables, on either engine, and is safe to call at
// every start, from every instance at once.
//
//	db := pgxdb.New(pool) // or sqlitedb.Open(ctx, "postroom.db", sqlitedb.Options{})
//	if err := idempotency.Migrate(ctx, db); err != nil { ... }
//	store, err := idempotency.NewSQL(db, idempotency.Options{})
//
// Both keep a record for Options.Retention (24 hours by default) from the
// call's start; DeleteExpired frees the older ones and is the
// application's to call periodically: nothing in this package starts a
// goroutine.
//
// # What it does not do
//
// It does not make a message's delivery exactly-once: a recipient whose
// message reached the relay just before a crash is reported unknown, and
// deciding about it is the application's. It does not record calls
// refused as a whole (authentication, validation): they sent nothing, and
// the key stays free.
//
// It imports postroom and package sqldb (for SQL), never a database
// driver (pgx, SQLite) nor River; the root package postroom does not
// import it.
package idempotency
