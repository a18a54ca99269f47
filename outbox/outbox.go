package outbox

import (
	"github.com/postroom/postroom/option"

	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/idempotency"
	"github.com/postroom/postroom/sqldb"
)

// Defaults of the Options fields.
const (
	// DefaultJobSize is the most recipients in one River job.
	DefaultJobSize = 500
	// DefaultBatchSize is how many recipients a job hands to the Mailer as
	// one call; see Options.BatchSize.
	DefaultBatchSize = 100
	// DefaultMaxAge is how long a deferred recipient is retried: Postfix's
	// maximal_queue_lifetime.
	DefaultMaxAge = 5 * 24 * time.Hour
	// DefaultQueue is the River queue the jobs go to.
	DefaultQueue = "postroom"
	// DefaultCachedCalls is how many call bodies a process keeps decoded.
	DefaultCachedCalls = 64
	// DefaultCachedCallBytes is the most bytes of call bodies a process
	// keeps decoded: 64 MiB of their JSON.
	DefaultCachedCallBytes = 64 << 20
	// DefaultMaxAttempts is how many runs of a job may fail before it
	// gives up its recipients: River's own default.
	DefaultMaxAttempts = river.MaxAttemptsDefault
	// DefaultConnections is how many messages a process's jobs hand to
	// the transport at once: transport.DefaultMaxConns, the SMTP
	// transport's connections.
	DefaultConnections = 8
)

// maxMaxAttempts is the most Options.MaxAttempts: River keeps a job's
// max_attempts in a smallint, and the job gets one attempt more (see
// Worker).
const maxMaxAttempts = 32766

// ReasonExpired is the reason code of a recipient still not delivered
// when the call's Options.MaxAge ran out: its status is rejected.
const ReasonExpired postroom.ReasonCode = "expired"

// ReasonGaveUp is the reason code of a recipient that its job gave up
// without having sent it: the job's runs failed Options.MaxAttempts times
// (an error, a panic, its timeout, its process dying), or the job was
// cancelled, or the call's stored rows could not be read. Its status is
// rejected: the message was not accepted by the transport (never handed
// over, or refused for now at its last attempt, whose reply the reason
// then gives), and it is never sent.
const ReasonGaveUp postroom.ReasonCode = "gave-up"

// Errors of Enqueue and Status, for errors.Is.
var (
	// ErrConflict: the idempotency key was used, in the same account, for
	// another call. It wraps idempotency.ErrConflict.
	ErrConflict = fmt.Errorf("outbox: %w", idempotency.ErrConflict)
	// ErrNotFound: no call has this id. It wraps postroom.ErrCallNotFound.
	ErrNotFound = fmt.Errorf("outbox: %w", postroom.ErrCallNotFound)
)

// Options configure an Outbox. The zero value of each field means its
// default.
type Options struct {
	// JobSize is the most recipients in one River job: a call becomes
	// ceil(recipients/JobSize) jobs, which run on every worker of every
	// instance at once. Zero means DefaultJobSize (500).
	JobSize int
	// BatchSize is how many recipients a job hands to the Mailer as one
	// call (see Worker): their reservations and results are written while
	// it runs, one write at a time, each reserving the messages waiting
	// for it. A process that dies mid-job leaves unknown only the
	// recipients it had reserved and not recorded: at most the messages
	// in flight on its connections (see Connections) plus the results
	// known since its last writes, never more than BatchSize per job. Zero means DefaultBatchSize (100); it is
	// capped at JobSize.
	BatchSize int
	// Connections is how many messages the jobs of a process (of this
	// Outbox's Workers) hand to the transport at once, together: set it to
	// the transport's connections (transport.SMTPOptions.MaxConns). A
	// recipient counts as handed over (unknown if its process dies before
	// its result is written) from when its message takes one of them, so
	// a killed process leaves at most Connections messages in doubt, not
	// its jobs' recipients waiting for a connection. Zero means
	// DefaultConnections (8, the SMTP transport's default MaxConns).
	Connections int
	// MaxAge is how long after the call's start (its enqueue, or
	// EnqueueOptions.At when later) a deferred recipient is retried; after
	// it, the recipient is rejected with reason ReasonExpired. Zero means
	// DefaultMaxAge (5 days, as Postfix's maximal_queue_lifetime).
	MaxAge time.Duration
	// Backoff is the wait before retry n (from 1) of a job's deferred
	// recipients. It is called from the workers concurrently. Nil means
	// DefaultBackoff.
	Backoff func(retry int) time.Duration
	// MaxAttempts is how many runs of a job may fail (return an error,
	// panic, pass River's JobTimeout, or die with their process) before
	// the job gives up: its recipients without a final result then become
	// rejected, ReasonGaveUp. A deferral is no failure: it snoozes the job
	// and is bounded by MaxAge. It is set on the jobs at Enqueue, which
	// inserts them with River's MaxAttempts one higher: River's last
	// attempt of a job only records the giving up (see Worker). Zero means
	// DefaultMaxAttempts (25); at most 32,766.
	MaxAttempts int
	// Queue is the River queue of the jobs. Empty means DefaultQueue
	// ("postroom").
	Queue string
	// CachedCalls is how many call bodies (message, files, global
	// params: not the recipients) each process keeps decoded for the next
	// jobs of the same call, the least recently used forgotten first.
	// Zero means DefaultCachedCalls (64).
	CachedCalls int
	// CachedCallBytes bounds the call bodies each process keeps decoded by
	// the size of their stored JSON; decoded, a body takes about as much
	// (its files stay base64 text). A body larger than the bound alone is
	// not kept: each job run loads it. Zero means DefaultCachedCallBytes
	// (64 MiB).
	CachedCallBytes int
	// Now is the clock of the call's start and of MaxAge, called
	// concurrently. Nil means time.Now. (River's own clock, for its
	// schedules, is its Config.Test.Time.)
	Now func() time.Time
	// Events, when not nil, is the event log Status reads what came back
	// after a done call's messages left from (a bounce, a complaint, an
	// unsubscribe: postroom.CallStatus.Later): an *events.SQL on the same
	// database, written by the Mailer's Options.OnEvent (an
	// events.Recorder) and by package inbound. Nil means Status shows no
	// later events.
	Events LaterEvents
	// Logger receives a record per batch and per job run at debug level
	// (a run's errors go back to River, which logs them), and one at warn
	// level when a job gives up recipients, with River's last error of
	// the job (a reason never holds error text). Nil discards every
	// record, as for every Logger of the module (package option).
	Logger *slog.Logger
}

// setDefaults gives every zero field of o its default, by the root
// package's rule for numbers: zero means the default, and a negative
// value is refused (CachedCalls too, for now: the cache has no "off").
// BatchSize is then capped at JobSize, and MaxAttempts refused above
// maxMaxAttempts. A nil Backoff, Now or Logger and an empty Queue get
// theirs too. New calls it before it uses any field.
func (o *Options) setDefaults() error {
	const op = "outbox.New"
	for _, err := range []error{
		option.Default(op, "Options.JobSize", &o.JobSize, DefaultJobSize),
		option.Default(op, "Options.BatchSize", &o.BatchSize, DefaultBatchSize),
		option.Default(op, "Options.CachedCalls", &o.CachedCalls, DefaultCachedCalls),
		option.Default(op, "Options.CachedCallBytes", &o.CachedCallBytes, DefaultCachedCallBytes),
		option.Default(op, "Options.MaxAttempts", &o.MaxAttempts, DefaultMaxAttempts),
		option.Default(op, "Options.Connections", &o.Connections, DefaultConnections),
		option.Default(op, "Options.MaxAge", &o.MaxAge, DefaultMaxAge),
	} {
		if err != nil {
			return err
		}
	}
	o.BatchSize = min(o.BatchSize, o.JobSize)
	if o.MaxAttempts > maxMaxAttempts {
		return option.Errorf(op, "Options.MaxAttempts", "is over %d (%d)", maxMaxAttempts, o.MaxAttempts)
	}
	if o.Backoff == nil {
		o.Backoff = DefaultBackoff
	}
	if o.Queue == "" {
		o.Queue = DefaultQueue
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Logger = option.Logger(o.Logger)
	return nil
}

// DefaultBackoff is Postfix's queue manager's: 5 minutes
// (minimal_backoff_time), doubled at each retry, at most 4,000 seconds
// (maximal_backoff_time).
func DefaultBackoff(retry int) time.Duration {
	const lo, hi = 300 * time.Second, 4000 * time.Second
	d := lo
	for i := 1; i < retry && d < hi; i++ {
		d *= 2
	}
	return min(d, hi)
}

// Outbox enqueues calls into River jobs and sends them from its Worker.
// It is immutable and safe for concurrent use; apart from its cache of
// decoded call bodies it holds no state: every fact lives in the
// database.
type Outbox struct {
	m     *postroom.Mailer
	db    sqldb.DB
	opts  Options
	river riverEngine // inserts only; never started
	cache *callCache
	conns chan struct{} // a message handed to the transport holds one (Options.Connections; see handover)
}

// New returns an Outbox that checks and sends calls with m and keeps them
// in db, whose schema Migrate has created: a PostgreSQL database
// (pgxdb.New of a pgx pool) or a SQLite file (sqlitedb.Open), the engine
// River's jobs live in too (see the package documentation). It validates
// opts and starts nothing. Every instance of an application should build
// its Outbox with the same Mailer options (transport aside): a call is
// checked by the enqueuing instance's and sent by the working instance's.
func New(m *postroom.Mailer, db sqldb.DB, opts Options) (*Outbox, error) {
	if m == nil {
		return nil, errors.New("outbox: New: nil Mailer")
	}
	if db == nil {
		return nil, errors.New("outbox: New: nil DB")
	}
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	inserter, err := riverFor(db, opts.Logger)
	if err != nil {
		return nil, fmt.Errorf("outbox: New: %w", err)
	}
	return &Outbox{m: m, db: db, opts: opts, river: inserter, cache: newCallCache(opts.CachedCalls, opts.CachedCallBytes),
		conns: make(chan struct{}, opts.Connections)}, nil
}

// SendArgs are the arguments of a job: a range of a stored call's
// recipients, never a copy of the call.
type SendArgs struct {
	CallID string `json:"call_id"`
	First  int    `json:"first"`
	Count  int    `json:"count"`
}

// Kind is the River job kind of the outbox's jobs.
func (SendArgs) Kind() string { return "postroom_outbox_send" }
