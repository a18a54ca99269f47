// Package dburl opens the database a URL names, on either engine behind
// the sqldb seam, for the postroom command:
//
//   - postgres://user@host:5432/db or postgresql://... (or libpq's
//     keyword=value form, host=... dbname=...): PostgreSQL, through a pgx
//     pool (package pgxdb), for any number of application instances;
//   - sqlite:PATH: one SQLite file (package sqlitedb), for one
//     application process. PATH is a file path as it is, relative to the
//     working directory (sqlite:postroom.db) or absolute
//     (sqlite:/var/lib/app/postroom.db); sqlite://PATH is the same
//     (sqlite:///var/lib/app/postroom.db is absolute). The file is created
//     if it does not exist. A query string (?...) is refused.
//
// Anything else is refused with an error naming both forms.
package dburl

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom/sqldb"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/sqldb/sqlitedb"
)

// Forms names the URLs Open takes, for messages.
const Forms = "postgres://user@host:5432/db (PostgreSQL) or sqlite:PATH (one SQLite file, such as sqlite:postroom.db)"

// ErrUnknown is Open's error (wrapped) for a URL of neither engine.
var ErrUnknown = errors.New("not a database URL")

// Engine returns the engine url names, without opening anything; an
// error wrapping ErrUnknown when it names neither.
func Engine(url string) (sqldb.Engine, error) {
	switch {
	case url == "":
		return "", fmt.Errorf("%w: empty; want %s", ErrUnknown, Forms)
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return sqldb.Postgres, nil
	case strings.HasPrefix(url, "sqlite:"):
		return sqldb.SQLite, nil
	case !strings.Contains(url, "://") && strings.Contains(url, "="):
		return sqldb.Postgres, nil // libpq's keyword=value form
	}
	// The URL is not repeated: it may hold a password.
	return "", fmt.Errorf("%w: want %s", ErrUnknown, Forms)
}

// SQLitePath returns the file path of a sqlite: URL.
func SQLitePath(url string) (string, error) {
	path, ok := strings.CutPrefix(url, "sqlite:")
	if !ok {
		return "", fmt.Errorf("%w: want %s", ErrUnknown, Forms)
	}
	path = strings.TrimPrefix(path, "//")
	if path == "" {
		return "", errors.New("sqlite: URL without a file path: want sqlite:PATH, such as sqlite:postroom.db")
	}
	return path, nil
}

// Open opens the database of url and checks that it answers (PostgreSQL)
// or takes its file for this process (SQLite, which refuses a file
// another process has open with an *sqlitedb.InUseError). The function
// returned closes it; call it once done with the DB.
func Open(ctx context.Context, url string) (sqldb.DB, func() error, error) {
	engine, err := Engine(url)
	if err != nil {
		return nil, nil, err
	}
	if engine == sqldb.SQLite {
		path, err := SQLitePath(url)
		if err != nil {
			return nil, nil, err
		}
		db, err := sqlitedb.Open(ctx, path, sqlitedb.Options{})
		if err != nil {
			return nil, nil, err
		}
		return db, db.Close, nil
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, nil, err // pgconn's message hides the password
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, nil, err
	}
	return pgxdb.New(pool), func() error { pool.Close(); return nil }, nil
}
