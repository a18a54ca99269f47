package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/httpapi"
	"github.com/postroom/postroom/sqldb"
	"github.com/postroom/postroom/templatestore"
	"github.com/postroom/postroom/transport"
)

// config is the server's configuration, from the command line and the
// environment.
type config struct {
	Listen       string
	EMLDir       string // deliver into this folder (transport.Dir)
	SMTP         string // or to this relay, HOST:PORT (transport.SMTP)
	SMTPTLS      string // none, starttls or tls
	SMTPUser     string
	SMTPPassword string // from POSTROOM_SMTP_PASSWORD, never a flag
	// SMTPTLSConfig is the TLS configuration for -smtp; nil means the
	// system's roots, verifying the host of -smtp. No flag sets it.
	SMTPTLSConfig *tls.Config
	Templates     string // a templatestore.Dir folder: <account_id>/<template_id>
	// TemplatesInMemory keeps the stored templates in memory
	// (templatestore.Memory), managed over templates.*, lost at exit,
	// rather than in the database.
	TemplatesInMemory bool
	Keys              string // a JSON file: account id to accepted keys
	NoAuth            bool
	MaxBody           int64
	MaxInflight       int64 // bytes of request bodies in flight (httpapi.Options.MaxInflightBytes)
	Preview           bool  // serve the preview page at /preview/
	Console           bool  // serve the console at /console/ (console.go)
	ResultLog         httpapi.ResultLog
	LogLevel          slog.Level // the server's log: records below it are dropped
	Timeouts          timeouts
	// Queue is the outbox's settings (-outbox-*), for calls sent later.
	Queue queueConfig
	// Hearing is what the server hears back on: bounces (-bounce-listen,
	// -bounce-domain) and one-click unsubscribes (-unsubscribe-url).
	Hearing hearingConfig
	// DatabaseURL is the database's URL, from -database-url, or
	// POSTROOM_DATABASE_URL, or defaultDatabaseURL: sqlite:PATH or
	// postgres://... Empty with -in-memory.
	DatabaseURL string
	// InMemory keeps no database (-in-memory): the suppression list, the
	// events and the idempotency records are in memory, lost at exit, and
	// no call is sent later.
	InMemory bool
	// DB is the one database of DatabaseURL, opened by run
	// (openDatabase); tests set it. Every part that keeps state there
	// takes it: stored templates, the suppression list, the event log,
	// idempotency records, the outbox (calls sent later). Nil: no
	// database, as with -in-memory.
	DB *database
}

// timeouts are the HTTP server's; tests shorten them.
type timeouts struct {
	ReadHeader time.Duration
	Read       time.Duration // the whole request, body included
	// Write runs from the end of the request's headers to the end of the
	// answer: reading the body, the whole call, writing the results.
	Write time.Duration
	Idle  time.Duration
	// Answer is the part of Write kept for writing the results: a call may
	// run for Write-Answer, then its unfinished recipients are deferred.
	Answer time.Duration
}

// defaultTimeouts fit the largest call: a 64 MiB body read at 1 MiB/s, and
// 25,000 recipients handed to an SMTP relay at 8 at a time in up to 150 ms
// each (about 8 minutes).
var defaultTimeouts = timeouts{
	ReadHeader: 10 * time.Second,
	Read:       2 * time.Minute,
	Write:      10 * time.Minute,
	Idle:       2 * time.Minute,
	Answer:     15 * time.Second,
}

const (
	defaultListen      = "127.0.0.1:8025"
	defaultEMLDir      = "mail"
	defaultMaxBody     = httpapi.DefaultMaxBodyBytes
	defaultMaxInflight = httpapi.DefaultInflightBodies * httpapi.DefaultMaxBodyBytes
	passwordEnv        = "POSTROOM_SMTP_PASSWORD"
	// previewPath is where -preview serves the preview page.
	previewPath = "/preview/"
)

// parseFlags reads the command line; getenv reads the environment.
func parseFlags(args []string, getenv func(string) string, usage io.Writer) (config, error) {
	cfg := config{Timeouts: defaultTimeouts}
	fs := flag.NewFlagSet("httpapi", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.StringVar(&cfg.Listen, "listen", defaultListen, "`address` to serve HTTP on")
	fs.StringVar(&cfg.EMLDir, "eml-dir", "", "deliver by writing each message as <send_id>.eml into `dir` (default ./"+defaultEMLDir+" without -smtp)")
	fs.StringVar(&cfg.SMTP, "smtp", "", "deliver through the SMTP server at `host:port`; the password is read from $"+passwordEnv)
	fs.StringVar(&cfg.SMTPTLS, "smtp-tls", "starttls", "TLS to the SMTP server: none, starttls or tls (none for a development relay such as Mailpit)")
	fs.StringVar(&cfg.SMTPUser, "smtp-user", "", "SMTP AUTH `user` name")
	fs.StringVar(&cfg.Templates, "templates", "", "stored templates for message.send_template, in `dir`/<account_id>/<template_id>")
	fs.BoolVar(&cfg.TemplatesInMemory, "templates-in-memory", false, "keep the stored templates in memory, managed with templates.add and the other templates endpoints, and lost at exit (for development; the database keeps them otherwise)")
	fs.StringVar(&cfg.DatabaseURL, "database-url", "", "the database holding the stored templates, suppression list, events, idempotency records and calls sent later (Prefer: respond-async): sqlite:PATH, one SQLite file for this one process, or postgres://user@host/db, PostgreSQL shared by every instance (default $"+databaseEnv+", else "+defaultDatabaseURL+")")
	fs.BoolVar(&cfg.InMemory, "in-memory", false, "keep no database: the suppression list, events and idempotency records in memory, lost at exit, no stored templates (unless -templates-in-memory) and no calls sent later")
	fs.StringVar(&cfg.Keys, "keys", "", "accept the keys in `file`, a JSON object of account id to a list of keys")
	fs.BoolVar(&cfg.NoAuth, "no-auth", false, "accept every call whatever its key (for development)")
	fs.Int64Var(&cfg.MaxBody, "max-body", defaultMaxBody, "largest request body in `bytes`")
	fs.Int64Var(&cfg.MaxInflight, "max-inflight", defaultMaxInflight, "most `bytes` of request bodies whose calls are in flight; past it, 503 with Retry-After")
	fs.BoolVar(&cfg.Preview, "preview", false, "serve the preview page at /preview/: what a call would send, rendered, without sending")
	fs.BoolVar(&cfg.Console, "console", false, "serve the console at "+consolePath+": messages and their timelines, the suppression list, queued calls, templates; log in with an account id and one of its keys")
	fs.TextVar(&cfg.ResultLog, "log-results", httpapi.ResultLog{}, "log each recipient's result as soon as it is final, at `level` debug, info, warn or error; off: only a call whose client went away has its results logged, at its end")
	fs.TextVar(&cfg.LogLevel, "log-level", slog.LevelInfo, "log records at `level` debug, info, warn or error and above")
	queueFlags(fs, &cfg.Queue)
	hearingFlags(fs, &cfg.Hearing)
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if err := cfg.Hearing.check(getenv); err != nil {
		return config{}, err
	}
	switch {
	case cfg.InMemory && cfg.DatabaseURL != "":
		return config{}, errors.New("-in-memory and -database-url exclude each other: state in memory or in a database")
	case cfg.InMemory:
	case cfg.DatabaseURL == "":
		cfg.DatabaseURL = cmp.Or(getenv(databaseEnv), defaultDatabaseURL)
	}
	if err := cfg.Queue.check(cfg.DatabaseURL != ""); err != nil {
		return config{}, err
	}
	if _, ok := smtpTLSModes[cfg.SMTPTLS]; !ok {
		return config{}, fmt.Errorf("-smtp-tls %q: want none, starttls or tls", cfg.SMTPTLS)
	}
	switch {
	case fs.NArg() > 0:
		return config{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	case cfg.EMLDir != "" && cfg.SMTP != "":
		return config{}, errors.New("-eml-dir and -smtp exclude each other: deliver into a folder or through SMTP")
	case cfg.TemplatesInMemory && cfg.Templates != "":
		return config{}, errors.New("-templates-in-memory and -templates exclude each other: templates come from memory, a folder or the database")
	case cfg.Keys != "" && cfg.NoAuth:
		return config{}, errors.New("-keys and -no-auth exclude each other")
	case cfg.Keys == "" && !cfg.NoAuth:
		return config{}, errors.New("give -keys FILE to check keys, or -no-auth to accept every call")
	case cfg.MaxBody <= 0:
		return config{}, errors.New("-max-body must be positive")
	case cfg.MaxInflight < cfg.MaxBody:
		return config{}, errors.New("-max-inflight must be at least -max-body, or the largest calls could never run")
	case cfg.SMTP == "" && (cfg.SMTPUser != "" || cfg.SMTPTLS != "starttls"):
		return config{}, errors.New("-smtp-user and -smtp-tls need -smtp")
	}
	if cfg.SMTP == "" && cfg.EMLDir == "" {
		cfg.EMLDir = defaultEMLDir
	}
	cfg.SMTPPassword = getenv(passwordEnv)
	return cfg, nil
}

// newServer builds the API's handler from cfg, and a cleanup function that
// releases the transport once the server has stopped.
func newServer(cfg config, logger *slog.Logger) (http.Handler, func() error, error) {
	opts := postroom.Options{Logger: logger}
	if cfg.NoAuth {
		opts.Auth = postroom.NoAuth{}
	} else {
		keys, err := readKeys(cfg.Keys)
		if err != nil {
			return nil, nil, err
		}
		opts.Auth = keys
	}
	if cfg.Templates != "" {
		if fi, err := os.Stat(cfg.Templates); err != nil {
			return nil, nil, fmt.Errorf("-templates: %w", err)
		} else if !fi.IsDir() {
			return nil, nil, fmt.Errorf("-templates: %s is not a folder", cfg.Templates)
		}
		opts.Templates = templatestore.NewDir(os.DirFS(cfg.Templates))
	}
	// The stores that can change (not a folder's) are also served at
	// templates.add and the other templates endpoints.
	var managed templatestore.Manager
	switch {
	case cfg.Templates != "":
	case cfg.TemplatesInMemory:
		managed = templatestore.NewMemory()
	case cfg.DB != nil:
		managed = templatestore.NewSQL(cfg.DB.DB)
	}
	if managed != nil {
		opts.Templates = managed
	}
	hr, err := newHearing(cfg.Hearing, cfg.DB, logger)
	if err != nil {
		return nil, nil, err
	}
	opts.Suppressions, opts.OnEvent = hr.list, hr.onEvent
	if cfg.Hearing.BounceDomain != "" {
		opts.VERP = postroom.VERP{Domain: cfg.Hearing.BounceDomain}
	}
	if hr.unsub != nil {
		opts.Unsubscribe = hr.unsub
	}

	var t postroom.Transport
	cleanup := func() error { return nil }
	if cfg.SMTP != "" {
		s, err := newSMTP(cfg, logger)
		if err != nil {
			return nil, nil, err
		}
		// One session set-up now, so that a relay that can never work (a
		// wrong password, no STARTTLS, a certificate that does not verify)
		// stops the server at start instead of deferring every recipient.
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = s.Check(cctx)
		cancel()
		if errors.Is(err, postroom.ErrTransportUnusable) {
			_ = s.Close()
			return nil, nil, fmt.Errorf("-smtp %s: %w", cfg.SMTP, explainTLS(err))
		} else if err != nil {
			logger.Warn("SMTP relay not reachable at start; calls will retry it", "error", err)
		}
		t, cleanup = withTLSHint(s, logger), s.Close
		if cfg.SMTPTLS == "none" && cfg.SMTPUser != "" {
			logger.Warn("-smtp-tls none: the SMTP password is sent without TLS")
		}
	} else {
		if err := os.MkdirAll(cfg.EMLDir, 0o700); err != nil {
			return nil, nil, fmt.Errorf("-eml-dir: %w", err)
		}
		d, err := transport.NewDir(cfg.EMLDir)
		if err != nil {
			return nil, nil, fmt.Errorf("-eml-dir: %w", err)
		}
		t = d
	}
	m, err := postroom.New(t, opts)
	if err != nil {
		return nil, nil, errors.Join(err, cleanup())
	}
	ho := httpapi.Options{
		Logger:           logger,
		MaxBodyBytes:     cfg.MaxBody,
		MaxInflightBytes: cfg.MaxInflight,
		CallTimeout:      cfg.Timeouts.Write - cfg.Timeouts.Answer,
		NoTemplateStore:  opts.Templates == nil,
		ResultLog:        cfg.ResultLog,
		Suppressions:     hr.list,
		Templates:        managed,
	}
	// messages.search and messages.info answer from the events the
	// server keeps: the event log with a database, memory without.
	if a, ok := hr.sends.(events.Activity); ok {
		ho.Activity = a
	}
	if cfg.Preview {
		// An application would put the page behind its admin
		// authentication; this program has none, so -preview shows it to
		// whoever can reach the API.
		ho.PreviewPath = previewPath
	}
	if ho.Idempotency, err = newIdempotencyStore(cfg.DB); err != nil {
		return nil, nil, errors.Join(err, cleanup())
	}
	if ho.Idempotency != nil && cfg.DB.Engine() == sqldb.Postgres {
		ho.MaxIdempotentCalls = maxIdempotentCalls
	}
	if cfg.DB != nil {
		var stop func() error
		if ho.Async, stop, err = startOutbox(cfg.DB, m, cfg.Queue, hr.log, logger); err != nil {
			return nil, nil, errors.Join(err, cleanup())
		}
		// The outbox's workers stop (finishing their jobs) before the
		// transport closes.
		closeTransport := cleanup
		cleanup = func() error { return errors.Join(stop(), closeTransport()) }
	}
	h, err := httpapi.New(m, ho)
	if err != nil {
		return nil, nil, errors.Join(err, cleanup())
	}
	var root http.Handler = h
	if cfg.Console {
		if root, err = withConsole(h, t, opts, hr, managed, ho.Async, logger); err != nil {
			return nil, nil, errors.Join(err, cleanup())
		}
	}
	if err := hr.start(cfg.Hearing, logger); err != nil {
		return nil, nil, errors.Join(err, cleanup())
	}
	// The receiver and the events' writer stop after the outbox's
	// workers, whose sends are events too.
	beforeHearing := cleanup
	cleanup = func() error { return errors.Join(beforeHearing(), hr.stop()) }
	return hr.handler(root), cleanup, nil
}

// readKeys reads a -keys file: {"account-id": ["key", ...], ...}.
func readKeys(path string) (postroom.StaticKeys, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-keys: %w", err)
	}
	var keys postroom.StaticKeys
	if err := json.Unmarshal(data, &keys); err != nil {
		return nil, fmt.Errorf("-keys %s: want a JSON object of account id to a list of keys: %w", path, err)
	}
	for account, ks := range keys {
		for _, k := range ks {
			if k == "" {
				return nil, fmt.Errorf("-keys %s: account %q has an empty key", path, account)
			}
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("-keys %s: no accounts", path)
	}
	return keys, nil
}

// newHTTPServer returns the http.Server for h, with production timeouts.
func newHTTPServer(h http.Handler, t timeouts, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// serve serves on ln until ctx is done, then shuts down gracefully: it
// stops accepting, lets the calls in flight finish (up to the write
// timeout), and returns.
func serve(ctx context.Context, srv *http.Server, ln net.Listener, logger *slog.Logger) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	logger.Info("serving", slog.String("addr", ln.Addr().String()))
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down: finishing the calls in flight")
	sctx, cancel := context.WithTimeout(context.Background(), srv.WriteTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	logger.Info("stopped")
	return err
}
