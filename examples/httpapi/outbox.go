package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/httpapi"
	"github.com/postroom/postroom/outbox"
)

// rescueAfter is how long River waits before it gives a job whose process
// died to another worker (River's RescueStuckJobsAfter): a few minutes,
// not River's hour, since the outbox's jobs take seconds.
const rescueAfter = 5 * time.Minute

// startOutbox starts this instance's River client, with the outbox's
// worker, on pool: every instance sharing the database works the calls
// any of them enqueued. It returns the outbox as the Handler's Async, and
// stop, which waits for the jobs at work to finish.
func startOutbox(pool *pgxpool.Pool, m *postroom.Mailer, logger *slog.Logger) (httpapi.Async, func() error, error) {
	ob, err := outbox.New(m, pool, outbox.Options{Logger: logger})
	if err != nil {
		return nil, nil, err
	}
	client, err := ob.NewClient(&river.Config{
		Logger:               logger,
		JobTimeout:           time.Minute,
		RescueStuckJobsAfter: rescueAfter,
	})
	if err != nil {
		return nil, nil, err
	}
	// The client lives as long as the server, past newServer's return:
	// its context is its own, and stop ends it.
	if err := client.Start(context.Background()); err != nil {
		return nil, nil, err
	}
	stop := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return client.Stop(ctx)
	}
	return ob.HTTP(), stop, nil
}
