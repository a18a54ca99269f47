package templatestore_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/templatestore"
	"github.com/postroom/postroom/transport"
)

// ExampleSQL opens the database named by POSTROOM_DATABASE_URL (such as
// postgres://app:secret@127.0.0.1:5432/app), creates the table, stores a
// template, and sends a message.send_template call that uses it. Every
// instance of an application does the same at start; a template Put by
// one is used by the next call of every other.
func ExampleSQL() {
	ctx := context.Background()
	// The application's one pool, which River and package idempotency
	// take too.
	pool, err := pgxpool.New(ctx, os.Getenv("POSTROOM_DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	db := pgxdb.New(pool)
	if err := templatestore.Migrate(ctx, db); err != nil { // safe at every start
		log.Fatal(err)
	}
	store := templatestore.NewSQL(db)
	if err := store.Put(ctx, "acme", "welcome", "Hello {{name}}!"); err != nil {
		log.Fatal(err)
	}

	m, err := postroom.New(transport.NewMemory(), postroom.Options{
		Auth:      postroom.StaticKeys{"acme": {"secret-key"}},
		Templates: store,
	})
	if err != nil {
		log.Fatal(err)
	}
	results, err := m.SendTemplate(ctx, &postroom.Call{
		Key:       "secret-key",
		AccountID: "acme",
		Message: postroom.Message{
			FromEmail: "news@acme.example", Subject: "Welcome",
			TextTemplateID: "welcome",
		},
		Recipients: []postroom.Recipient{{Email: "ann@example.org", Params: map[string]any{"name": "Ann"}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(results[0].Email, results[0].Status)
}

// TestExampleSQL runs ExampleSQL on a fresh database of a real
// PostgreSQL (internal/pgtest) and checks what it stored: the example
// has no Output line because it needs a server, but it must work as
// shown.
func TestExampleSQL(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Setenv("POSTROOM_DATABASE_URL", dsn)
	ExampleSQL() // log.Fatal on any error, which fails the test binary

	pool, err := pgxpool.New(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	source, err := templatestore.NewSQL(pgxdb.New(pool)).Template(t.Context(), "acme", "welcome")
	if err != nil || source != "Hello {{name}}!" {
		t.Errorf("after ExampleSQL: %q, %v; want the template it stored", source, err)
	}
}
