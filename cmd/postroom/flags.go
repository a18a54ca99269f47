package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/postroom/postroom/internal/dburl"
	"github.com/postroom/postroom/sqldb"
)

// errHelp: -h was asked for and the flags were printed.
var errHelp = errors.New("help")

// isHelp reports whether arg asks for help: -h, -help or --help, as
// package flag takes them.
func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// common are the flags every command takes.
type common struct {
	databaseURL string
	json        bool
}

// newFlags returns a command's flag set with the common flags: its
// errors and -h go to e.stderr.
func newFlags(e *env, name, args string, c *common) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: postroom %s [flags] %s\n\nFlags:\n", name, args)
		fs.PrintDefaults()
	}
	fs.StringVar(&c.databaseURL, "database-url", "", "the application's database: postgres://user@host/db (PostgreSQL) or sqlite:PATH (its SQLite file, such as sqlite:postroom.db; the application must be stopped) (default $POSTROOM_DATABASE_URL)")
	fs.BoolVar(&c.json, "json", false, "print JSON for scripts")
	return fs
}

// parse parses args with fs, flags before or after the other arguments,
// and returns the other arguments; it wants exactly n of them (-1: any
// number).
func parse(fs *flag.FlagSet, args []string, n int) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, &usageError{msg: err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		rest = append(rest, args[0])
		args = args[1:]
	}
	if n >= 0 && len(rest) != n {
		fs.Usage()
		return nil, usagef("want %d argument(s), got %d", n, len(rest))
	}
	return rest, nil
}

// database is an open database and what closes it.
type database struct {
	sqldb.DB
	close func() error
}

// Close closes the database.
func (d *database) Close() { _ = d.close() }

// open opens the database of c, or of POSTROOM_DATABASE_URL: PostgreSQL
// or a SQLite file (package internal/dburl), and checks that the given
// tables are there (a database not migrated is said so, before any
// query fails on it).
func (c *common) open(ctx context.Context, e *env, tables ...string) (*database, error) {
	url := c.databaseURL
	if url == "" {
		url = e.getenv("POSTROOM_DATABASE_URL")
	}
	if url == "" {
		return nil, usagef("no database: set POSTROOM_DATABASE_URL or -database-url to %s", dburl.Forms)
	}
	db, closeDB, err := dburl.Open(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	d := &database{DB: db, close: closeDB}
	if len(tables) > 0 {
		missing, err := missingTables(ctx, db, tables...)
		if err == nil && len(missing) > 0 {
			err = &failure{msg: notMigratedLine, err: errNotMigrated}
		}
		if err != nil {
			d.Close()
			return nil, err
		}
	}
	return d, nil
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
