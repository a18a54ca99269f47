// Package outboxenv starts package outbox over a real database for the
// module's tests (outbox's own, cmd/postroom's, the examples'): a fresh
// migrated database per test, PostgreSQL's copied from one migrated once
// per test binary (internal/testkit/pgtest's Template), SQLite's a copy
// of a file migrated once; a Mailer over SMTP with no retry of its own, a
// River client working the queue until the test ends, and waits for a
// call or the queue to be done.
//
//	db := outboxenv.NewDB(t) // or outboxenv.NewSQLite(t), or e.Open(t) for e in Engines()
//	ob, _ := outbox.New(outboxenv.SMTPMailer(t, srv.Addr(), nil), db, outbox.Options{})
//	outboxenv.StartClient(t, ob, nil)
//	id := outboxenv.Enqueue(t, db, ob, postroom.OpSend, call, outbox.EnqueueOptions{})
//	status := outboxenv.WaitDone(t, ob, id)
//
// A package using PostgreSQL runs its tests through pgtest.Main. For the
// tests of an application, see outbox/outboxtest.
package outboxenv

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/dbtest"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/sqldb/sqlitedb"
	"github.com/postroom/postroom/transport"
)

// migrated is the database the tests' databases are copied from: outbox's
// tables and River's, migrated once per test binary.
var migrated = &pgtest.Template{Setup: func(ctx context.Context, pool *pgxpool.Pool) error {
	return outbox.Migrate(ctx, pgxdb.New(pool))
}}

// Engine opens fresh migrated databases of one engine.
type Engine struct {
	// Name is "postgres" or "sqlite", for t.Run.
	Name string
	// Open returns a fresh migrated database for t alone, gone when t
	// ends.
	Open func(t testing.TB) sqldb.DB
}

// Engines returns PostgreSQL's and SQLite's, for a test of the queue's
// contract on both.
func Engines() []Engine {
	return []Engine{{"postgres", NewDB}, {"sqlite", func(t testing.TB) sqldb.DB { return NewSQLite(t) }}}
}

// NewDB returns a PostgreSQL database of NewPool's.
func NewDB(t testing.TB) sqldb.DB {
	t.Helper()
	return pgxdb.New(NewPool(t))
}

// sqliteTemplate is the SQLite file the tests' files are copied from:
// outbox's tables and River's, migrated once per test binary, kept in
// memory.
var sqliteTemplate struct {
	once sync.Once
	data []byte
	err  error
}

// NewSQLite returns a migrated SQLite database in a file of t's
// temporary folder, closed when t ends.
func NewSQLite(t testing.TB) sqldb.DB {
	t.Helper()
	tp := &sqliteTemplate
	tp.once.Do(func() {
		dir, err := os.MkdirTemp("", "outboxenv-")
		if err != nil {
			tp.err = err
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "template.db")
		db, err := sqlitedbOpen(path)
		if err != nil {
			tp.err = err
			return
		}
		err = outbox.Migrate(context.Background(), db)
		if cerr := db.Close(); err == nil {
			err = cerr // closing checkpoints the log into the file
		}
		if err != nil {
			tp.err = err
			return
		}
		tp.data, tp.err = os.ReadFile(path)
	})
	if tp.err != nil {
		t.Fatalf("outboxenv: migrating SQLite: %v", tp.err)
	}
	path := filepath.Join(t.TempDir(), "postroom.db")
	if err := os.WriteFile(path, tp.data, 0o600); err != nil {
		t.Fatal(err)
	}
	return dbtest.SQLiteAt(t, path)
}

// pollInterval is how often the waits look at the database.
const pollInterval = 20 * time.Millisecond

// stopTimeout bounds the stop of a test's River client.
const stopTimeout = 30 * time.Second

// DSN creates a migrated database for t alone and returns its DSN, for a
// pool of the caller's or another process; it is dropped when t ends.
func DSN(t testing.TB) string {
	t.Helper()
	return migrated.DSN(t)
}

// NewPool returns a pool on a migrated database for t alone, closed and
// dropped when t ends.
func NewPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return migrated.NewPool(t)
}

// SMTPMailer returns a Mailer delivering to addr over plain SMTP, with no
// retry of its own (a deferral comes back to the outbox), closed when t
// ends. A nil auth means postroom.NoAuth.
func SMTPMailer(t testing.TB, addr string, auth postroom.Authenticator) *postroom.Mailer {
	t.Helper()
	tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: addr, TLS: transport.NoTLS, Retry: transport.RetryPolicy{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	if auth == nil {
		auth = postroom.NoAuth{}
	}
	m, err := postroom.New(tr, postroom.Options{Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// StartClient starts a River client working ob's queue until t ends, and
// returns it. cfg is copied; what it leaves zero is set for tests: River's
// log discarded, a fetch every 20 ms (5 ms after a fetch at the soonest),
// and TestOnly (no staggered start of River's maintenance). A nil cfg is
// the zero Config.
func StartClient(t testing.TB, ob *outbox.Outbox, cfg *river.Config) *outbox.Client {
	t.Helper()
	var c river.Config
	if cfg != nil {
		c = *cfg
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.FetchCooldown == 0 {
		c.FetchCooldown = 5 * time.Millisecond
	}
	if c.FetchPollInterval == 0 {
		c.FetchPollInterval = pollInterval
	}
	c.TestOnly = true
	client, err := ob.NewClient(&c)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		if err := client.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
	return client
}

// Enqueue enqueues call in a transaction of its own on db, commits it,
// and returns the call's id.
func Enqueue(t testing.TB, db sqldb.DB, ob *outbox.Outbox, op postroom.Operation, call *postroom.Call, eo outbox.EnqueueOptions) string {
	t.Helper()
	var id string
	err := sqldb.BeginFunc(t.Context(), db, func(tx sqldb.Tx) error {
		var err error
		id, err = ob.Enqueue(t.Context(), tx, op, call, eo)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// WaitDone polls the call's status until it is done, and returns it; it
// fails t at t's deadline.
func WaitDone(t testing.TB, ob *outbox.Outbox, id string) *postroom.CallStatus {
	t.Helper()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		s, err := ob.Status(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if s.State == postroom.CallDone {
			return s
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("call %s not done: %v", id, s.Counts)
		case <-tick.C:
		}
	}
}

// WaitJobsEnded polls River's jobs on db until none is left to run
// (each is completed, cancelled or discarded); it fails t at t's
// deadline.
func WaitJobsEnded(t testing.TB, db sqldb.Querier) {
	t.Helper()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		var left int
		if err := db.QueryRow(t.Context(), `SELECT count(*) FROM river_job
			WHERE state NOT IN ('completed', 'cancelled', 'discarded')`).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("%d jobs left", left)
		case <-tick.C:
		}
	}
}

// sqlitedbOpen opens the SQLite file at path, as the tests' are.
func sqlitedbOpen(path string) (*sqlitedb.DB, error) {
	return sqlitedb.Open(context.Background(), path, sqlitedb.Options{})
}
