package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgxpool"
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
	fs.StringVar(&c.databaseURL, "database-url", "", "PostgreSQL URL of the application's database (default $POSTROOM_DATABASE_URL)")
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

// open connects to the database of c, or of POSTROOM_DATABASE_URL.
func (c *common) open(ctx context.Context, e *env) (*pgxpool.Pool, error) {
	url := c.databaseURL
	if url == "" {
		url = e.getenv("POSTROOM_DATABASE_URL")
	}
	if url == "" {
		return nil, usagef("no database: set POSTROOM_DATABASE_URL or -database-url")
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("database: %w", err)
	}
	return pool, nil
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
