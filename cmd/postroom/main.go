// Command postroom is for the people who run an application that sends
// mail with postroom, and for template authors: it looks at and steers
// the calls queued in the application's outbox, manages the suppression
// list and the stored templates, applies the schema migrations, and
// previews call bodies without sending anything.
//
// Usage:
//
//	postroom migrate
//	postroom calls -account ID [-limit N] [-before CURSOR]
//	postroom call [-watch] [-waiting N] [-later N] ID
//	postroom cancel [-reason TEXT] ID
//	postroom retry ID
//	postroom activity -account ID [-limit N] [-state S] [-before CURSOR] ADDRESS|SEND_ID
//	postroom rejects list -account ID [-reason CODE] [-prefix P] [-scope S] [-list ID] [-all]
//	postroom rejects add -account ID -email ADDR [-reason CODE] [-detail TEXT] [-for DURATION] [-scope all|lists|list] [-list ID]
//	postroom rejects delete -account ID -email ADDR [-scope all|lists|list] [-list ID]
//	postroom templates list -account ID
//	postroom templates add|update -account ID -name ID -file FILE [-publish] [-no-check] [-keep-versions N]
//	postroom templates publish -account ID -name ID [-version N] [-keep-versions N]
//	postroom templates info|delete -account ID -name ID
//	postroom templates render -account ID (-name ID [-published] | -file FILE) [-params FILE.json] [-subject S] [-text]
//	postroom preview [-recipients N,...] [-strict] [-show text|html] FILE.json
//	postroom send -dry-run FILE.json
//
// The commands that read the database take its URL from
// POSTROOM_DATABASE_URL, or from -database-url, which overrides it:
// postgres://user@host:5432/db for PostgreSQL, or sqlite:PATH for the
// application's SQLite file (sqlite:postroom.db, relative to the working
// directory; sqlite:/var/lib/app/postroom.db). A SQLite file serves one
// process: the command takes it while the application is stopped, and is
// refused, naming PostgreSQL, while the application has it open. Each
// command takes -json to print JSON for scripts instead of text. Flags
// may come before or after the other arguments; -h prints a command's
// usage. A failure is one line on stderr and exit status 1, as are
// preview -strict and send -dry-run when a recipient would be refused.
//
// The command sends no mail: send only checks a call (-dry-run), and
// cancel and retry change the outbox's records and River's jobs, which
// the application's workers then follow.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], &env{
		stdout:   os.Stdout,
		stderr:   os.Stderr,
		getenv:   os.Getenv,
		terminal: isTerminal(os.Stdout),
	})
	stop()
	os.Exit(code)
}

// env is what a command reads and writes besides its arguments.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// terminal is true when stdout is a terminal: call shows a progress
	// bar.
	terminal bool
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// usageError is a command line the command does not take: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// commands are the subcommands by name, each with its one-line summary.
var commands = map[string]struct {
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}{
	"migrate":   {"create or update the database tables of the outbox, River, templates, suppressions, events and idempotency records", runMigrate},
	"calls":     {"list an account's calls, newest first, with their counts", runCalls},
	"call":      {"show a call: status, counts, recipients still waiting (-watch follows it), what came back later", runCall},
	"cancel":    {"cancel a call: recipients not yet handed over become rejected, call-canceled", runCancel},
	"retry":     {"retry a call's deferred recipients now", runRetry},
	"activity":  {"show what happened to the messages to an address, or to one message by its send id", runActivity},
	"rejects":   {"list, add or delete suppression list entries", runRejects},
	"templates": {"add, update, publish (or roll back), list, show, render or delete stored templates", runTemplates},
	"preview":   {"render a call body file for each recipient, sending nothing", runPreview},
	"send":      {"check a call body file (-dry-run); the command never sends", runSend},
}

// run runs the command line args and returns the exit status: 0, 1 for
// a failure, 2 for a bad command line.
func run(ctx context.Context, args []string, e *env) int {
	if len(args) == 0 || args[0] == "help" || isHelp(args[0]) {
		usage(e.stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(e.stderr, "postroom: unknown command %q\n", args[0])
		usage(e.stderr)
		return 2
	}
	err := c.run(ctx, e, args[1:])
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(e.stderr, "postroom %s: %v\n", args[0], err)
		return 2
	default:
		fmt.Fprintf(e.stderr, "postroom %s: %s\n", args[0], line(err))
		return 1
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: postroom <command> [flags] [arguments]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-9s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'postroom <command> -h' for a command's flags. The database is POSTROOM_DATABASE_URL, or -database-url:\npostgres://user@host:5432/db (PostgreSQL), or sqlite:PATH (the application's SQLite file, such as sqlite:postroom.db).")
}

// quote writes s for a line of text output: as is, or quoted when it
// has spaces or is empty.
func quote(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"") {
		return fmt.Sprintf("%q", s)
	}
	return s
}
