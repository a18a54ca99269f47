package outbox

import (
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// DefaultMaxWorkers is how many jobs NewClient's client runs at once in
// the outbox's queue when config does not set it. Each job hands over up
// to the Mailer's Options.Concurrency messages at once.
const DefaultMaxWorkers = 4

// NewClient returns a River client for an application that has none yet:
// config (nil means a zero river.Config) with the outbox's Worker added to
// its Workers (created if nil) and its queue added to its Queues with
// DefaultMaxWorkers, unless config already names it. Start the client to
// work jobs, and Stop it to end.
//
// An application that already has a River client adds the Worker and the
// queue to its own config instead.
func (o *Outbox) NewClient(config *river.Config) (*river.Client[pgx.Tx], error) {
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
	client, err := river.NewClient(riverpgxv5.New(o.pool), &c)
	if err != nil {
		return nil, fmt.Errorf("outbox: NewClient: %w", err)
	}
	return client, nil
}
