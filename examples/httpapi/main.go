// Command httpapi serves the mail-sending API's two operations over HTTP,
// exactly as the spec has them, on top of a postroom.Mailer:
//
//	POST /api/1.0/message.send
//	POST /api/1.0/message.send_template
//
// It is the reference for applications that wrap postroom in their own
// HTTP handlers: the request body is decoded into a postroom.Call, the
// request's context is handed to the Mailer (a client that goes away
// cancels its call), and a call that fails as a whole gets an honest HTTP
// status and a JSON body
//
//	{"status":"error","code":"...","message":"...","field":"..."}
//
// with code invalid_json, validation_error, no_recipients,
// too_many_recipients, unknown_template, template_syntax or
// invalid_idempotency_key (400), invalid_key (401), not_found (404),
// method_not_allowed (405, with an Allow header), timeout (408),
// idempotency_conflict or idempotency_in_progress (409, the latter with
// Retry-After), too_large (413), unsupported_media_type
// (415), internal (500, the detail only in the log), not_configured (501:
// message.send_template on a server started without -templates or
// -database-url) or busy
// (503, with Retry-After: the bodies of the calls in flight add up to
// -max-inflight, 128 MiB by default). invalid_json covers
// bodies that do not decode into a postroom.Call: bad syntax, a value of the
// wrong type, and fields the spec does not have, named in "field" (such as
// "message.htmll"). A call that was accepted is answered 200 with one result
// per recipient, even when some recipients failed.
//
// Usage:
//
//	go run ./examples/httpapi -no-auth                      # deliver into ./outbox
//	go run ./examples/httpapi -keys keys.json -templates templates -outbox /var/spool/mail-preview
//	POSTROOM_SMTP_PASSWORD=... go run ./examples/httpapi -keys keys.json -smtp relay.example.com:587 -smtp-user app
//	POSTROOM_DATABASE_URL=postgres://app@db.example.com/app go run ./examples/httpapi -keys keys.json -smtp relay.example.com:587
//
// With -database-url (or POSTROOM_DATABASE_URL), stored templates come
// from PostgreSQL (templatestore.SQL, its tables created or updated at
// start), so instances behind a load balancer share them; see
// database.go.
//
// A call with an Idempotency-Key header runs through idempotency.Run
// (see idempotency.go): a retry with the same key and body gets the
// recorded results and sends nothing again, on any instance sharing the
// -database-url database (in memory without one); the same key with
// another body is 409 idempotency_conflict, and while the first call runs
// 409 idempotency_in_progress with Retry-After. A retry after an instance
// died mid-call sends only to the recipients that had no result, and
// reports those whose message was handed over unknown (interrupted).
//
// Each recipient's result is logged as soon as it is final, while the call
// runs: one record each, msg=result, with the request's request_id, the
// recipient's index in the call (not its address), its status, reason and
// send_id, at the level of -log-results (info by default). When the
// client goes away mid-call, the call stops (recipients not yet handed
// over are deferred, and logged so) and the log already holds who was
// sent: whoever retries finds there whom not to send again, even if the
// server itself stops before the call ends. With -log-results off, or a
// level the log does not keep, the results of a call whose answer did not
// reach the client are logged at its end instead, addresses included,
// msg="result not delivered to the client".
//
// SIGINT or SIGTERM stops accepting new connections and lets the calls in
// flight finish before the program exits.
//
// With -preview it also serves the preview page (package preview) at
// /preview/: a call pasted there is rendered for each recipient and never
// sent.
//
// It imports only the module's public packages (postroom, transport,
// templatestore, idempotency, preview), never internal/: it is what an
// application outside the module can write. Nothing imports it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
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
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	err := run(ctx, os.Args[1:], os.Getenv, logger)
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "httpapi:", err)
		os.Exit(2)
	}
}

// run serves until ctx is done.
func run(ctx context.Context, args []string, getenv func(string) string, logger *slog.Logger) (err error) {
	cfg, err := parseFlags(args, getenv, os.Stderr)
	if err != nil {
		return err
	}
	if cfg.DB, err = openDatabase(ctx, cfg.DatabaseURL); err != nil {
		return err
	}
	if cfg.DB != nil {
		defer cfg.DB.Close() // after the server and its cleanup
	}
	h, cleanup, err := newServer(cfg, logger)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, cleanup()) }()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	return serve(ctx, newHTTPServer(h, cfg.Timeouts, logger), ln, logger)
}
