// Command outboxworker is one worker process of the outbox's tests and
// benchmarks: a Mailer, an Outbox and a River client working the outbox's
// queue on the database named by the environment variable
// POSTROOM_OUTBOX_DSN, until SIGTERM or SIGINT. It prints "ready" on
// standard error once the client works, and the outbox's debug records
// (one per batch and per job run) after, unless -log-level is above
// DEBUG.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/transport"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "outboxworker:", err)
		os.Exit(1)
	}
}

func run() error {
	smtpAddr := flag.String("smtp", "", "SMTP server host:port; empty: a transport that discards every message")
	batch := flag.Int("batch-size", 0, "outbox Options.BatchSize (0: default)")
	backoff := flag.Duration("backoff", 0, "wait before each retry of deferred recipients (0: outbox.DefaultBackoff)")
	rescue := flag.Duration("rescue-after", 0, "River RescueStuckJobsAfter, also its JobTimeout unless -job-timeout is given (0: River's defaults)")
	jobTimeout := flag.Duration("job-timeout", 0, "River JobTimeout (0: -rescue-after)")
	workers := flag.Int("max-workers", outbox.DefaultMaxWorkers, "jobs run at once")
	concurrency := flag.Int("concurrency", 0, "postroom Options.Concurrency: messages a job hands over at once (0: default)")
	maxConns := flag.Int("max-conns", 0, "SMTP connections at once, also outbox Options.Connections (0: transport.DefaultMaxConns)")
	jobSize := flag.Int("job-size", 0, "outbox Options.JobSize (0: default)")
	level := slog.LevelDebug
	flag.TextVar(&level, "log-level", slog.LevelDebug, "the least level logged (DEBUG: the outbox's record of each batch and job run)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	var tr postroom.Transport = postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { return nil })
	if *smtpAddr != "" {
		s, err := transport.NewSMTP(transport.SMTPOptions{Addr: *smtpAddr, TLS: transport.NoTLS, Retry: transport.RetryPolicy{Attempts: 1}, MaxConns: *maxConns})
		if err != nil {
			return err
		}
		defer s.Close()
		tr = s
	}
	m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}, Concurrency: *concurrency})
	if err != nil {
		return err
	}
	dsn := os.Getenv("POSTROOM_OUTBOX_DSN")
	if dsn == "" {
		return errors.New("POSTROOM_OUTBOX_DSN is not set")
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	opts := outbox.Options{BatchSize: *batch, JobSize: *jobSize, Connections: *maxConns, Logger: logger}
	if *backoff > 0 {
		opts.Backoff = func(int) time.Duration { return *backoff }
	}
	ob, err := outbox.New(m, pgxdb.New(pool), opts)
	if err != nil {
		return err
	}
	client, err := ob.NewClient(&river.Config{
		Logger:               slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Queues:               map[string]river.QueueConfig{outbox.DefaultQueue: {MaxWorkers: *workers}},
		RescueStuckJobsAfter: *rescue,
		JobTimeout:           cmp.Or(*jobTimeout, *rescue),
		FetchCooldown:        5 * time.Millisecond,
		FetchPollInterval:    50 * time.Millisecond,
	})
	if err != nil {
		return err
	}
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	logger.Info("ready", "pid", os.Getpid())
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return client.Stop(stopCtx)
}
