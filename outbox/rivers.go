package outbox

// River on each engine: the outbox holds one River client that only
// inserts, lists, cancels and retries jobs, over the engine's River driver
// (riverpgxv5 on a pgx pool, riversqlite on a database/sql *sql.DB), and
// gets each engine's transaction back from the sqldb.Tx it is given.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/postroom/postroom/sqldb"
)

// riverEngine is what the outbox does with River, whatever the engine.
// A nil tx means outside a transaction (list only).
type riverEngine interface {
	// accepts reports whether tx is a transaction of the engine's.
	accepts(tx sqldb.Tx) error
	insertMany(ctx context.Context, tx sqldb.Tx, jobs []river.InsertManyParams) error
	cancel(ctx context.Context, tx sqldb.Tx, id int64) error
	retry(ctx context.Context, tx sqldb.Tx, id int64) error
	list(ctx context.Context, tx sqldb.Tx, params *river.JobListParams) (*river.JobListResult, error)
	migrate(ctx context.Context) error
	validate(ctx context.Context) (*rivermigrate.ValidateResult, error)
	// argsWhere is the JobListParams.Where of the jobs whose args'
	// call_id is the named argument postroom_call (a string).
	argsWhere(callID string) (string, river.NamedArgs)
	// newClient returns a working client with config.
	newClient(config *river.Config) (*Client, error)
}

// pgxPool is what pgxdb.DB gives River: its pool.
type pgxPool interface{ Pool() *pgxpool.Pool }

// sqlDB is what sqlitedb.DB gives River: its *sql.DB.
type sqlDB interface{ SQL() *sql.DB }

// riverFor returns the River of db's engine, logging to logger.
func riverFor(db sqldb.DB, logger *slog.Logger) (riverEngine, error) {
	switch db.Engine() {
	case sqldb.Postgres:
		p, ok := db.(pgxPool)
		if !ok {
			return nil, fmt.Errorf("a PostgreSQL DB of type %T has no Pool method (use pgxdb.New)", db)
		}
		return newRiverOf(riverpgxv5.New(p.Pool()), logger, pgxTx, postgresArgsWhere, func(c *river.Client[pgx.Tx]) *Client { return &Client{pg: c} })
	case sqldb.SQLite:
		d, ok := db.(sqlDB)
		if !ok {
			return nil, fmt.Errorf("a SQLite DB of type %T has no SQL method (use sqlitedb.Open)", db)
		}
		return newRiverOf(riversqlite.New(d.SQL()), logger, sqlTx, sqliteArgsWhere, func(c *river.Client[*sql.Tx]) *Client { return &Client{lite: c} })
	}
	return nil, fmt.Errorf("engine %q is not one River works on", db.Engine())
}

// errForeignTx: Enqueue was given a transaction that is not its engine's.
var errForeignTx = errors.New("outbox: the transaction is not of the outbox's engine: pass pgxdb.WrapTx(tx) on PostgreSQL, sqlitedb.WrapTx(tx) on SQLite, or a Tx of the DB's Begin")

// pgxTx returns the pgx transaction under tx.
func pgxTx(tx sqldb.Tx) (pgx.Tx, error) {
	if t, ok := tx.(interface{ PgxTx() pgx.Tx }); ok {
		return t.PgxTx(), nil
	}
	return nil, errForeignTx
}

// sqlTx returns the database/sql transaction under tx.
func sqlTx(tx sqldb.Tx) (*sql.Tx, error) {
	if t, ok := tx.(interface{ SQLTx() *sql.Tx }); ok {
		return t.SQLTx(), nil
	}
	return nil, errForeignTx
}

// postgresArgsWhere finds a call's jobs with jsonb containment (River's
// GIN index on args serves it).
func postgresArgsWhere(callID string) (string, river.NamedArgs) {
	filter, _ := json.Marshal(map[string]string{"call_id": callID}) // a map of strings always marshals
	return "args @> @postroom_call::jsonb", river.NamedArgs{"postroom_call": string(filter)}
}

// sqliteArgsWhere finds a call's jobs by their args' call_id.
func sqliteArgsWhere(callID string) (string, river.NamedArgs) {
	return "args ->> '$.call_id' = @postroom_call", river.NamedArgs{"postroom_call": callID}
}

// riverOf is River on the engine whose transactions are TTx.
type riverOf[TTx any] struct {
	driver riverdriver.Driver[TTx]
	client *river.Client[TTx]
	txOf   func(sqldb.Tx) (TTx, error)
	where  func(callID string) (string, river.NamedArgs)
	wrap   func(*river.Client[TTx]) *Client
}

func newRiverOf[TTx any](driver riverdriver.Driver[TTx], logger *slog.Logger, txOf func(sqldb.Tx) (TTx, error),
	where func(string) (string, river.NamedArgs), wrap func(*river.Client[TTx]) *Client) (*riverOf[TTx], error) {
	client, err := river.NewClient(driver, &river.Config{Logger: logger})
	if err != nil {
		return nil, err
	}
	return &riverOf[TTx]{driver: driver, client: client, txOf: txOf, where: where, wrap: wrap}, nil
}

func (r *riverOf[TTx]) accepts(tx sqldb.Tx) error {
	_, err := r.txOf(tx)
	return err
}

func (r *riverOf[TTx]) insertMany(ctx context.Context, tx sqldb.Tx, jobs []river.InsertManyParams) error {
	t, err := r.txOf(tx)
	if err != nil {
		return err
	}
	_, err = r.client.InsertManyFastTx(ctx, t, jobs)
	return err
}

func (r *riverOf[TTx]) cancel(ctx context.Context, tx sqldb.Tx, id int64) error {
	t, err := r.txOf(tx)
	if err != nil {
		return err
	}
	_, err = r.client.JobCancelTx(ctx, t, id)
	return err
}

func (r *riverOf[TTx]) retry(ctx context.Context, tx sqldb.Tx, id int64) error {
	t, err := r.txOf(tx)
	if err != nil {
		return err
	}
	_, err = r.client.JobRetryTx(ctx, t, id)
	return err
}

func (r *riverOf[TTx]) list(ctx context.Context, tx sqldb.Tx, params *river.JobListParams) (*river.JobListResult, error) {
	if tx == nil {
		return r.client.JobList(ctx, params)
	}
	t, err := r.txOf(tx)
	if err != nil {
		return nil, err
	}
	return r.client.JobListTx(ctx, t, params)
}

func (r *riverOf[TTx]) migrate(ctx context.Context) error {
	m, err := rivermigrate.New(r.driver, nil)
	if err != nil {
		return err
	}
	_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}

func (r *riverOf[TTx]) validate(ctx context.Context) (*rivermigrate.ValidateResult, error) {
	m, err := rivermigrate.New(r.driver, nil)
	if err != nil {
		return nil, err
	}
	return m.Validate(ctx, nil)
}

func (r *riverOf[TTx]) argsWhere(callID string) (string, river.NamedArgs) { return r.where(callID) }

func (r *riverOf[TTx]) newClient(config *river.Config) (*Client, error) {
	c, err := river.NewClient(r.driver, config)
	if err != nil {
		return nil, err
	}
	return r.wrap(c), nil
}
