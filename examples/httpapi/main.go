// Command httpapi serves the mail-sending API's two operations over HTTP,
// exactly as the spec has them, with package httpapi on a postroom.Mailer:
//
//	POST /api/1.0/message.send
//	POST /api/1.0/message.send_template
//
// The endpoints, their error-to-status mapping, idempotency keys, the
// bound on bodies in flight, the result log and the preview page are
// package httpapi's (see its documentation); this program parses its
// flags, builds the Mailer's transport and template store, mounts the
// Handler in an http.Server with production timeouts, and stops
// gracefully.
//
// Usage:
//
//	go run ./examples/httpapi -no-auth                      # deliver into ./mail
//	go run ./examples/httpapi -keys keys.json -templates templates -eml-dir /var/spool/mail-preview
//	POSTROOM_SMTP_PASSWORD=... go run ./examples/httpapi -keys keys.json -smtp relay.example.com:587 -smtp-user app
//	POSTROOM_DATABASE_URL=postgres://app@db.example.com/app go run ./examples/httpapi -keys keys.json -smtp relay.example.com:587
//
// With -database-url (or POSTROOM_DATABASE_URL), stored templates come
// from PostgreSQL (templatestore.SQL, its tables created or updated at
// start), managed over HTTP with templates.add, update, publish, delete,
// info, list and render (package httpapi's Options.Templates;
// -templates-in-memory serves the same from memory, for development), and
// so do the records of calls made with an Idempotency-Key
// header (idempotency.SQL) and the calls sent later (package outbox, on
// River): instances behind a load balancer share them all, through one
// pool per instance; see database.go. Without it, idempotency records are kept in memory.
//
// With -database-url, calls with Prefer: respond-async are sent later by
// package outbox; -outbox-backoff, -outbox-max-age, -outbox-batch-size,
// -outbox-job-size, -outbox-workers and -outbox-rescue-after set its
// queue (see outbox.go), and -log-level the server's log level.
//
// Every call consults a suppression list, served as rejects.add,
// rejects.list and rejects.delete, and the Mailer's events are recorded:
// in the -database-url PostgreSQL (suppression.SQL, events.SQL through an
// events.Recorder), in memory without it. -bounce-domain turns VERP on;
// -bounce-listen serves package inbound's receiver (SMTP, or LMTP with
// -bounce-lmtp) for that domain, so that bounces and complaints list
// their recipients; -unsubscribe-url writes one-click List-Unsubscribe
// headers (postroom.Options.Unsubscribe) and serves package unsubscribe's
// endpoint at that URL's path, its keys from POSTROOM_UNSUBSCRIBE_KEY
// (see bounces.go).
//
// -max-body and -max-inflight set httpapi.Options.MaxBodyBytes and
// MaxInflightBytes; -log-results sets ResultLog (a level, or off); -preview
// serves the preview page at /preview/, to whoever can reach the API (an
// application puts it behind its admin authentication); -console serves
// package console's pages at /console/, behind HTTP basic authentication
// with an account id and one of its keys (see console.go).
//
// SIGINT or SIGTERM stops accepting new connections and lets the calls in
// flight finish before the program exits.
//
// It imports only the module's public packages (postroom, httpapi,
// transport, templatestore, idempotency, outbox, suppression, events,
// inbound, unsubscribe), never internal/: it is what an
// application outside the module can write. Nothing imports it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second signal stops the program at once
	}()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "httpapi:", err)
		os.Exit(2)
	}
}

// run serves until ctx is done, logging to stderr.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) (err error) {
	cfg, err := parseFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	if cfg.DB, err = openDatabase(ctx, cfg.DatabaseURL); err != nil {
		return err
	}
	if cfg.DB != nil {
		defer cfg.DB.Close() // after the server and its cleanup
	}
	if cfg.Hearing.BounceListen != "" {
		if cfg.Hearing.BounceLn, err = net.Listen("tcp", cfg.Hearing.BounceListen); err != nil {
			return fmt.Errorf("-bounce-listen: %w", err)
		}
	}
	h, cleanup, err := newServer(cfg, logger)
	if err != nil {
		if cfg.Hearing.BounceLn != nil {
			cfg.Hearing.BounceLn.Close()
		}
		return err
	}
	defer func() { err = errors.Join(err, cleanup()) }()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	return serve(ctx, newHTTPServer(h, cfg.Timeouts, logger), ln, logger)
}
