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
// Memory keeps records in one process; SQL keeps them in PostgreSQL for
// many instances, on the application's *pgxpool.Pool, with Schema as its
// migration (SQL.Migrate applies it under an advisory lock, so instances
// starting together are safe). The pool is the one the application
// already has, shared with package templatestore's SQL and package
// outbox: River's driver (riverpgxv5) takes a *pgxpool.Pool, and code
// written for database/sql reaches the same pool through pgx's
// stdlib.OpenDBFromPool, so it is the one handle every user can pass
// without opening a second pool.
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
// It imports postroom and pgx (for SQL), never River nor a database/sql
// driver; the root package postroom does not import it.
package idempotency
