// Package pgtest gives tests a real PostgreSQL: one server per test binary,
// started on first use, and a fresh database per test, dropped when the
// test ends.
//
// A package whose tests use it runs them through Main, which stops the
// server once they are done, before goleak looks for what is left:
//
//	func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Main(m)) }
//
// and each test asks for its own database:
//
//	pool := pgtest.NewPool(t) // a *pgxpool.Pool, as postroom's packages take
//	dsn := pgtest.DSN(t)      // or its DSN, for another process to open
//
// A package whose tests all start from the same schema declares a Template:
// its Setup (the migrations) runs once per test binary, and each test's
// database is a copy of the template's (CREATE DATABASE ... TEMPLATE),
// which costs no more than an empty one:
//
//	var migrated = &pgtest.Template{Setup: outbox.Migrate}
//	pool := migrated.NewPool(t)
//
// # Which server
//
// If POSTROOM_TEST_DATABASE_URL is set, it is the DSN of a server the tests
// may create and drop databases on (PostgreSQL 13 or newer, for DROP
// DATABASE ... WITH (FORCE); a superuser, or a role with CREATEDB), and
// nothing is started. Otherwise pgtest looks for Debian's PostgreSQL
// binaries (/usr/lib/postgresql/<version>/bin, the newest version found),
// runs initdb into a fresh temporary folder and starts postgres on a free
// port of 127.0.0.1, with its Unix socket in that folder too, fsync off
// and messages in English. PostgreSQL refuses to run as root: when the test
// binary runs as root, initdb and postgres run as the user "postgres" (which
// Debian's package creates), owning the folder. On Linux the server is
// started with a parent-death signal, so a test binary that dies without
// stopping it (a panic, a timeout, SIGKILL) does not leave it running; the
// temporary folder is then left behind.
//
// When neither is available, a test asking for a database is skipped with a
// message naming the command that installs PostgreSQL (apt-get install
// postgresql), or fails when the environment variable CI is "true", so CI
// never passes by skipping. A server that is installed but does not start
// fails the test, with the server's log.
//
// # State
//
// The server is per test binary, so this package keeps it in package
// state, guarded by a mutex: New and DSN are safe for concurrent use by
// parallel tests. Database names are unique within the binary and carry
// its process id, so test binaries sharing one server through
// POSTROOM_TEST_DATABASE_URL do not collide.
//
// From the module it imports nothing; it imports pgx's stdlib driver, which
// is why it lives under internal and only tests import it.
package pgtest
