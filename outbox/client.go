package outbox

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// DefaultMaxWorkers is how many jobs NewClient's client runs at once in
// the outbox's queue when config does not set it. Each job hands over up
// to the Mailer's Options.Concurrency messages at once.
const DefaultMaxWorkers = 4

// Client is a River client working the outbox's queue, on the outbox's
// engine: NewClient's. Start it to work jobs, and Stop it to end. River's
// own client is Postgres's or SQLite's, for what River does beyond
// starting and stopping.
type Client struct {
	pg   *river.Client[pgx.Tx]
	lite *river.Client[*sql.Tx]
}

// Postgres returns the River client of an outbox on PostgreSQL
// (riverpgxv5), or nil on SQLite.
func (c *Client) Postgres() *river.Client[pgx.Tx] { return c.pg }

// SQLite returns the River client of an outbox on SQLite (riversqlite),
// or nil on PostgreSQL.
func (c *Client) SQLite() *river.Client[*sql.Tx] { return c.lite }

// Start starts working jobs (River's Client.Start); ctx is the client's
// until Stop.
func (c *Client) Start(ctx context.Context) error {
	if c.pg != nil {
		return c.pg.Start(ctx)
	}
	return c.lite.Start(ctx)
}

// Stop stops fetching jobs and waits for those at work to finish, or for
// ctx to end (River's Client.Stop).
func (c *Client) Stop(ctx context.Context) error {
	if c.pg != nil {
		return c.pg.Stop(ctx)
	}
	return c.lite.Stop(ctx)
}

// StopAndCancel stops fetching jobs and cancels those at work, then waits
// for them to return (River's Client.StopAndCancel).
func (c *Client) StopAndCancel(ctx context.Context) error {
	if c.pg != nil {
		return c.pg.StopAndCancel(ctx)
	}
	return c.lite.StopAndCancel(ctx)
}

// JobCancel cancels job id (River's Client.JobCancel): a running job's
// context is cancelled, and the job gives its recipients up (see Worker).
func (c *Client) JobCancel(ctx context.Context, id int64) error {
	var err error
	if c.pg != nil {
		_, err = c.pg.JobCancel(ctx, id)
	} else {
		_, err = c.lite.JobCancel(ctx, id)
	}
	return err
}

// NewClient returns a River client for an application that has none yet,
// on the outbox's engine (riverpgxv5 over the pool of a pgxdb.DB,
// riversqlite over the *sql.DB of a sqlitedb.DB): config (nil means a
// zero river.Config) with the outbox's Worker added to its Workers
// (created if nil) and its queue added to its Queues with
// DefaultMaxWorkers, unless config already names it. Start the client to
// work jobs, and Stop it to end.
//
// An application that already has a River client adds the Worker and the
// queue to its own config instead.
func (o *Outbox) NewClient(config *river.Config) (*Client, error) {
	var c river.Config
	if config != nil {
		c = *config
	}
	if c.Workers == nil {
		c.Workers = river.NewWorkers()
	}
	if err := river.AddWorkerSafely(c.Workers, o.Worker()); err != nil {
		return nil, fmt.Errorf("outbox: NewClient: %w", err)
	}
	queues := make(map[string]river.QueueConfig, len(c.Queues)+1)
	for name, q := range c.Queues {
		queues[name] = q
	}
	if _, ok := queues[o.opts.Queue]; !ok {
		queues[o.opts.Queue] = river.QueueConfig{MaxWorkers: DefaultMaxWorkers}
	}
	c.Queues = queues
	client, err := o.river.newClient(&c)
	if err != nil {
		return nil, fmt.Errorf("outbox: NewClient: %w", err)
	}
	return client, nil
}
