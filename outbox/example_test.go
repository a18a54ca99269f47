package outbox_test

import (
	"context"
	"log"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/transport"
)

// An application with no River client yet: migrate, build the Outbox,
// start a client that works its queue.
func ExampleOutbox_NewClient() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://localhost/app")
	if err != nil {
		log.Fatal(err)
	}
	if err := outbox.Migrate(ctx, pool); err != nil { // River's tables and the outbox's
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
	ob, err := outbox.New(m, pool, outbox.Options{})
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
// and queue in its config.
func ExampleOutbox_Worker() {
	var pool *pgxpool.Pool // the application's
	var ob *outbox.Outbox  // outbox.New(mailer, pool, outbox.Options{})
	workers := river.NewWorkers()
	// river.AddWorker(workers, &MyWorker{}) ... the application's own
	river.AddWorker(workers, ob.Worker())
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
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

// Enqueue in the same transaction as the order: the receipt goes if and
// only if the order commits.
func ExampleOutbox_Enqueue() {
	ctx := context.Background()
	var pool *pgxpool.Pool // the application's
	var ob *outbox.Outbox
	call := &postroom.Call{
		AccountID: "shop",
		Message:   postroom.Message{FromEmail: "shop@example.com", Subject: "Order {{order}}", Text: "Thanks for order {{order}}."},
		Recipients: []postroom.Recipient{
			{Email: "ann@example.org", Params: map[string]any{"order": "A-1042"}},
		},
	}
	var callID string
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO orders (id) VALUES ($1)`, "A-1042"); err != nil {
			return err
		}
		var err error
		callID, err = ob.Enqueue(ctx, tx, postroom.OpSend, call, outbox.EnqueueOptions{IdempotencyKey: "order-A-1042"})
		return err // a *postroom.ValidationError here rolls the order back too
	})
	if err != nil {
		log.Fatal(err)
	}
	status, err := ob.Status(ctx, callID)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("%s: %v", callID, status.Counts) // {"queued": 1}, later {"sent": 1}
}
