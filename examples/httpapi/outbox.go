package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/httpapi"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

// defaultRescueAfter is how long River waits before it gives a job whose
// process died to another worker (River's RescueStuckJobsAfter) when
// -outbox-rescue-after is not given: a few minutes, not River's hour,
// since the outbox's jobs take seconds.
const defaultRescueAfter = 5 * time.Minute

// jobTimeout bounds one run of an outbox job (River's JobTimeout); see
// jobTimeoutFor for a short rescue time.
const jobTimeout = time.Minute

// writeRetry is how long the outbox retries a result write while
// PostgreSQL is out of reach, after a run's timeout too.
const writeRetry = 10 * time.Second

// jobTimeoutFor is River's JobTimeout for a rescue time: a run that times
// out still writes what it knows (for up to writeRetry), and it must be
// done before River may give its job to another worker, or its known
// results end interrupted. So jobTimeout, or rescue less writeRetry, or
// half the rescue time when that is shorter still.
func jobTimeoutFor(rescue time.Duration) time.Duration {
	if rescue > 2*writeRetry {
		return min(jobTimeout, rescue-writeRetry)
	}
	return rescue / 2
}

// queueConfig is the outbox's settings from the command line; a zero
// field means the outbox's (or River's) default.
type queueConfig struct {
	Backoff     time.Duration // the first retry's wait, doubled at each retry
	MaxAge      time.Duration // outbox.Options.MaxAge
	BatchSize   int           // outbox.Options.BatchSize
	JobSize     int           // outbox.Options.JobSize
	MaxWorkers  int           // jobs this instance runs at once (River's MaxWorkers)
	RescueAfter time.Duration // River's RescueStuckJobsAfter
}

// queueFlags registers the outbox's flags on fs, into q.
func queueFlags(fs *flag.FlagSet, q *queueConfig) {
	fs.DurationVar(&q.Backoff, "outbox-backoff", 0, "with -database-url: wait `d` before the first retry of a deferred recipient, doubled at each retry up to 4000s or d (0: Postfix's 5m)")
	fs.DurationVar(&q.MaxAge, "outbox-max-age", 0, "with -database-url: reject (expired) a recipient still deferred `d` after its call started (0: 120h, Postfix's maximal_queue_lifetime)")
	fs.IntVar(&q.BatchSize, "outbox-batch-size", 0, "with -database-url: recipients a job hands to the Mailer as one call, their results written together (0: "+strconv.Itoa(outbox.DefaultBatchSize)+")")
	fs.IntVar(&q.JobSize, "outbox-job-size", 0, "with -database-url: most recipients in one job of a call sent later (0: "+strconv.Itoa(outbox.DefaultJobSize)+")")
	fs.IntVar(&q.MaxWorkers, "outbox-workers", 0, "with -database-url: jobs this instance runs at once (0: "+strconv.Itoa(outbox.DefaultMaxWorkers)+")")
	fs.DurationVar(&q.RescueAfter, "outbox-rescue-after", 0, "with -database-url: give a job whose instance died to another after `d` (0: "+defaultRescueAfter.String()+")")
}

// check refuses negative settings, and settings without a database.
func (q queueConfig) check(database bool) error {
	switch {
	case q.Backoff < 0, q.MaxAge < 0, q.BatchSize < 0, q.JobSize < 0, q.MaxWorkers < 0, q.RescueAfter < 0:
		return errors.New("-outbox-* settings must not be negative")
	case q != queueConfig{} && !database:
		return errors.New("-outbox-* settings need -database-url")
	}
	return nil
}

// options are the outbox.Options of q.
func (q queueConfig) options(logger *slog.Logger) outbox.Options {
	opts := outbox.Options{Logger: logger, MaxAge: q.MaxAge, BatchSize: q.BatchSize, JobSize: q.JobSize}
	if first := q.Backoff; first > 0 {
		limit := max(first, 4000*time.Second)
		opts.Backoff = func(retry int) time.Duration {
			d := first
			for i := 1; i < retry && d < limit; i++ {
				d *= 2
			}
			return min(d, limit)
		}
	}
	return opts
}

// startOutbox starts this instance's River client, with the outbox's
// worker, on pool: every instance sharing the database works the calls
// any of them enqueued. A call's status shows what came back later for
// its messages from log (the event log the Mailer's send events and the
// bounce receiver write), when not nil. It returns the outbox as the
// Handler's Async, and stop, which waits for the jobs at work to finish.
func startOutbox(pool *pgxpool.Pool, m *postroom.Mailer, q queueConfig, log *events.SQL, logger *slog.Logger) (httpapi.Async, func() error, error) {
	opts := q.options(logger)
	if log != nil {
		opts.Events = log
	}
	ob, err := outbox.New(m, pgxdb.New(pool), opts)
	if err != nil {
		return nil, nil, err
	}
	rescue := cmp.Or(q.RescueAfter, defaultRescueAfter)
	cfg := &river.Config{
		Logger:               logger,
		JobTimeout:           jobTimeoutFor(rescue),
		RescueStuckJobsAfter: rescue,
	}
	if q.MaxWorkers > 0 {
		cfg.Queues = map[string]river.QueueConfig{outbox.DefaultQueue: {MaxWorkers: q.MaxWorkers}}
	}
	client, err := ob.NewClient(cfg)
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
	return ob.AccountCalls(), stop, nil
}
