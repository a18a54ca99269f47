package outbox_test

import (
	"context"
	"log"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/sqldb/sqlitedb"
	"github.com/postroom/postroom/transport"
)

// An application with no River client yet, on one SQLite file: migrate,
// build the Outbox, start a client that works its queue.
func ExampleOutbox_NewClient() {
	ctx := context.Background()
	db, err := sqlitedb.Open(ctx, "postroom.db", sqlitedb.Options{}) // or pgxdb.New(pool)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := outbox.Migrate(ctx, db); err != nil { // River's tables and the outbox's
		log.Fatal(err)
	}
	smtp, err := transport.NewSMTP(transport.SMTPOptions{Addr: "localhost:25"})
	if err != nil {
		log.Fatal(err)
	}
	m, err := postroom.New(smtp, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		log.Fatal(err)
	}
	ob, err := outbox.New(m, db, outbox.Options{})
	if err != nil {
		log.Fatal(err)
	}
	client, err := ob.NewClient(nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Stop(ctx)
}

// An application with its own River client registers the outbox's Worker
// and queue in its config: on SQLite, River's riversqlite driver over the
// *sql.DB of the outbox's sqlitedb.DB.
func ExampleOutbox_Worker() {
	var db *sqlitedb.DB   // the application's
	var ob *outbox.Outbox // outbox.New(mailer, db, outbox.Options{})
	workers := river.NewWorkers()
	// river.AddWorker(workers, &MyWorker{}) ... the application's own
	river.AddWorker(workers, ob.Worker())
	client, err := river.NewClient(riversqlite.New(db.SQL()), &river.Config{
		Workers: workers,
		Queues: map[string]river.QueueConfig{
			river.QueueDefault:  {MaxWorkers: 100},
			outbox.DefaultQueue: {MaxWorkers: 4},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = client // Start and Stop with the application
}

// The same on PostgreSQL: River's riverpgxv5 driver over the
// application's pool, the one of the outbox's pgxdb.DB.
func ExampleOutbox_Worker_postgres() {
	var pool *pgxpool.Pool // the application's
	var ob *outbox.Outbox  // outbox.New(mailer, pgxdb.New(pool), outbox.Options{})
	workers := river.NewWorkers()
	river.AddWorker(workers, ob.Worker())
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Workers: workers,
		Queues:  map[string]river.QueueConfig{outbox.DefaultQueue: {MaxWorkers: 4}},
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = client // Start and Stop with the application
}

// Enqueue in the same transaction as the order, on SQLite: the
// application's own *sql.Tx, begun on the *sql.DB of the outbox's
// sqlitedb.DB, wrapped. The receipt goes if and only if the order
// commits.
func ExampleOutbox_Enqueue() {
	ctx := context.Background()
	var db *sqlitedb.DB // the application's: sqlitedb.Open
	var ob *outbox.Outbox
	call := &postroom.Call{
		AccountID: "shop",
		Message:   postroom.Message{FromEmail: "shop@example.com", Subject: "Order {{order}}", Text: "Thanks for order {{order}}."},
		Recipients: []postroom.Recipient{
			{Email: "ann@example.org", Params: map[string]any{"order": "A-1042"}},
		},
	}
	tx, err := db.SQL().BeginTx(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO orders (id) VALUES (?)`, "A-1042"); err != nil {
		log.Fatal(err)
	}
	callID, err := ob.Enqueue(ctx, sqlitedb.WrapTx(tx), postroom.OpSend, call, outbox.EnqueueOptions{IdempotencyKey: "order-A-1042"})
	if err != nil {
		log.Fatal(err) // a *postroom.ValidationError here rolls the order back too
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}
	status, err := ob.Status(ctx, callID)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("%s: %v", callID, status.Counts) // {"queued": 1}, later {"sent": 1}
}

// The same on PostgreSQL, in the application's pgx transaction.
func ExampleOutbox_Enqueue_postgres() {
	ctx := context.Background()
	var pool *pgxpool.Pool // the application's
	var ob *outbox.Outbox  // outbox.New(mailer, pgxdb.New(pool), outbox.Options{})
	var call *postroom.Call
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO orders (id) VALUES ($1)`, "A-1042"); err != nil {
			return err
		}
		_, err := ob.Enqueue(ctx, pgxdb.WrapTx(tx), postroom.OpSend, call, outbox.EnqueueOptions{IdempotencyKey: "order-A-1042"})
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
}
