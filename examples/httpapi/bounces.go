package main

// Hearing back: the suppression list every call consults, the events the
// Mailer emits, the bounce receiver (-bounce-listen, -bounce-domain) and
// the one-click unsubscribe endpoint (-unsubscribe-url). The list and the
// events are in the database (suppression.SQL, events.SQL written by an
// events.Recorder): the SQLite file, or PostgreSQL, shared by every
// instance; with -in-memory they are in this process's memory
// (suppression.Memory, events.Memory).

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/inbound"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/unsubscribe"
)

// unsubscribeKeyEnv holds the keys of -unsubscribe-url's tokens: a secret,
// which a flag would show to ps.
const unsubscribeKeyEnv = "POSTROOM_UNSUBSCRIBE_KEY"

// eventFlushEvery is how often the events buffered by the Recorder are
// written when no new event comes to write them: a bounce for a send not
// yet written finds no record and is dropped, so the wait stays short.
const eventFlushEvery = time.Second

// hearingConfig is what the server hears back on, from the command line
// and the environment.
type hearingConfig struct {
	// BounceListen is the address the bounce receiver serves SMTP on
	// (LMTP with BounceLMTP); empty means no receiver.
	BounceListen string
	BounceLMTP   bool
	// BounceDomain turns VERP on (postroom.Options.VERP.Domain): each
	// message's envelope sender is bounces+<send_id>@BounceDomain.
	BounceDomain string
	// BounceLn is BounceListen's listener, opened by run; tests set it.
	BounceLn net.Listener
	// UnsubscribeURL is the https base URL of the one-click unsubscribe
	// endpoint; the server serves its path. Empty means none.
	UnsubscribeURL string
	// UnsubscribeKeys sign and verify its tokens, from
	// POSTROOM_UNSUBSCRIBE_KEY; the first signs.
	UnsubscribeKeys []unsubscribe.Key
}

// hearingFlags registers the flags of h on fs.
func hearingFlags(fs *flag.FlagSet, h *hearingConfig) {
	fs.StringVar(&h.BounceListen, "bounce-listen", "", "receive bounces and complaints by SMTP on `address` (the bounce domain's MX, or a Postfix's transport_maps); needs -bounce-domain")
	fs.BoolVar(&h.BounceLMTP, "bounce-lmtp", false, "with -bounce-listen: speak LMTP instead of SMTP (Postfix transport_maps lmtp:host:port)")
	fs.StringVar(&h.BounceDomain, "bounce-domain", "", "VERP: send each message with envelope sender bounces+<send_id>@`domain`, whose mail -bounce-listen receives")
	fs.StringVar(&h.UnsubscribeURL, "unsubscribe-url", "", "write a one-click List-Unsubscribe header into every list message (one whose call has a List-Id header) without one, to https `url`/<token>, and serve the endpoint at url's path; keys from $"+unsubscribeKeyEnv)
}

// check refuses flags that do not go together, and reads the keys.
func (h *hearingConfig) check(getenv func(string) string) error {
	if h.BounceListen != "" && h.BounceDomain == "" {
		return errors.New("-bounce-listen needs -bounce-domain: the receiver takes mail for the VERP domain only")
	}
	if h.BounceLMTP && h.BounceListen == "" {
		return errors.New("-bounce-lmtp needs -bounce-listen")
	}
	if h.BounceDomain != "" && (strings.ContainsAny(h.BounceDomain, "@ /") || !strings.Contains(h.BounceDomain, ".")) {
		return fmt.Errorf("-bounce-domain %q: want a domain name such as bounce.example.com", h.BounceDomain)
	}
	if h.UnsubscribeURL == "" {
		return nil
	}
	u, err := url.Parse(h.UnsubscribeURL)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("-unsubscribe-url %q: want an https URL without query or fragment (RFC 8058)", h.UnsubscribeURL)
	}
	if p := strings.TrimSuffix(u.Path, "/") + "/"; p == "/" || strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, previewPath) {
		return fmt.Errorf("-unsubscribe-url %q: want a path of its own, such as /unsubscribe/, not / nor under /api/ or %s", h.UnsubscribeURL, previewPath)
	}
	if h.UnsubscribeKeys, err = parseUnsubscribeKeys(getenv(unsubscribeKeyEnv)); err != nil {
		return fmt.Errorf("-unsubscribe-url: $%s: %w", unsubscribeKeyEnv, err)
	}
	return nil
}

// parseUnsubscribeKeys reads "ID:SECRET[,ID:SECRET...]", each SECRET in
// standard base64 (openssl rand -base64 32): the first key signs, all
// verify, so that a key is rotated by putting a new one first.
func parseUnsubscribeKeys(v string) ([]unsubscribe.Key, error) {
	if strings.TrimSpace(v) == "" {
		return nil, errors.New("not set: want ID:BASE64SECRET, such as k1:$(openssl rand -base64 32)")
	}
	var keys []unsubscribe.Key
	for i, part := range strings.Split(v, ",") {
		id, secret, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return nil, fmt.Errorf("key %d: want ID:BASE64SECRET", i+1)
		}
		b, err := base64.StdEncoding.DecodeString(secret)
		if err != nil {
			return nil, fmt.Errorf("key %d (%s): the secret is not base64: %w", i+1, id, err)
		}
		if len(b) < unsubscribe.MinSecretBytes {
			return nil, fmt.Errorf("key %d (%s): %d bytes of secret, want at least %d", i+1, id, len(b), unsubscribe.MinSecretBytes)
		}
		keys = append(keys, unsubscribe.Key{ID: id, Secret: b})
	}
	return keys, nil
}

// hearing is what newServer wires from hearingConfig: the list and the
// events for the Mailer and the Handler, and the parts that serve.
type hearing struct {
	list    suppression.List
	onEvent func(ctx context.Context, e postroom.Event)
	sends   events.Sends
	log     *events.SQL               // nil without a database
	rec     *events.Recorder          // nil without a database
	unsub   *unsubscribe.Unsubscriber // nil without -unsubscribe-url
	path    string                    // where unsub is served
	stop    func() error              // stops what start started
}

// newHearing makes the suppression list and the event store, in db when
// it is not nil (their tables brought up to date by openDatabase), in
// memory otherwise, and the unsubscribe endpoint. Nothing runs until
// start.
func newHearing(h hearingConfig, db *database, logger *slog.Logger) (*hearing, error) {
	hr := &hearing{stop: func() error { return nil }}
	if db != nil {
		list, err := suppression.NewSQL(db.DB, suppression.Options{})
		if err != nil {
			return nil, err
		}
		log, err := events.NewSQL(db.DB, events.SQLOptions{})
		if err != nil {
			return nil, err
		}
		rec, err := log.NewRecorder(events.RecorderOptions{Logger: logger})
		if err != nil {
			return nil, err
		}
		hr.list, hr.sends, hr.log, hr.onEvent, hr.rec = list, log, log, rec.OnEvent, rec
	} else {
		list, err := suppression.NewMemory(suppression.Options{})
		if err != nil {
			return nil, err
		}
		mem, err := events.NewMemory(events.MemoryOptions{})
		if err != nil {
			return nil, err
		}
		hr.list, hr.sends, hr.onEvent = list, mem, mem.OnEvent
	}
	if h.UnsubscribeURL != "" {
		u, err := unsubscribe.New(unsubscribe.Options{
			Keys:         h.UnsubscribeKeys,
			BaseURL:      h.UnsubscribeURL,
			Suppressions: hr.list,
			OnEvent:      hr.onEvent,
			Logger:       logger,
		})
		if err != nil {
			return nil, fmt.Errorf("-unsubscribe-url: %w", err)
		}
		base, _ := url.Parse(h.UnsubscribeURL) // checked by parseFlags
		hr.unsub, hr.path = u, strings.TrimSuffix(base.Path, "/")+"/"
	}
	return hr, nil
}

// flushEvery starts a goroutine writing rec's buffered events every
// eventFlushEvery, so that a send is recorded within that time even when
// no later event comes to write it (the Handler's calls end without a
// Flush), and rotating log's day partitions at once and every hour
// (events.SQL.Rotate); the function returned stops it and writes what is
// left.
func flushEvery(rec *events.Recorder, log *events.SQL, logger *slog.Logger) func() error {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(eventFlushEvery)
		defer tick.Stop()
		hourly := time.NewTicker(time.Hour)
		defer hourly.Stop()
		rotate := func() {
			if _, err := log.Rotate(ctx, time.Now()); err != nil && ctx.Err() == nil {
				logger.Warn("events: rotating the day partitions failed", "error", err)
			}
		}
		rotate()
		for {
			select {
			case <-ctx.Done():
				return
			case <-hourly.C:
				rotate()
			case <-tick.C:
				if err := rec.Flush(ctx); err != nil && ctx.Err() == nil {
					logger.Warn("events: writing the buffered events failed; kept for the next write", "error", err)
				}
			}
		}
	}()
	return func() error {
		cancel()
		<-done
		fctx, fcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer fcancel()
		return rec.Flush(fctx)
	}
}

// start starts the writer of the buffered events, with a database, and
// the bounce receiver on h.BounceLn when it is set; both run until stop.
func (hr *hearing) start(h hearingConfig, logger *slog.Logger) error {
	if h.BounceLn == nil {
		if hr.rec != nil {
			hr.stop = flushEvery(hr.rec, hr.log, logger)
		}
		return nil
	}
	rc, err := inbound.New(inbound.Options{
		VERP:         postroom.VERP{Domain: h.BounceDomain},
		Sends:        hr.sends,
		Suppressions: hr.list,
		OnEvent:      hr.onEvent,
		Logger:       logger,
	})
	if err != nil {
		return fmt.Errorf("-bounce-domain: %w", err)
	}
	if hr.rec != nil {
		hr.stop = flushEvery(hr.rec, hr.log, logger)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var serveErr error
	wg.Go(func() {
		if h.BounceLMTP {
			serveErr = rc.ServeLMTP(ctx, h.BounceLn)
		} else {
			serveErr = rc.Serve(ctx, h.BounceLn)
		}
		if serveErr != nil {
			logger.Error("the bounce receiver stopped", "error", serveErr)
		}
	})
	logger.Info("receiving bounces", slog.String("addr", h.BounceLn.Addr().String()), slog.String("domain", h.BounceDomain), slog.Bool("lmtp", h.BounceLMTP))
	stopEvents := hr.stop
	hr.stop = func() error {
		cancel() // Serve closes the listener and its connections
		wg.Wait()
		return errors.Join(serveErr, stopEvents())
	}
	return nil
}

// handler mounts the unsubscribe endpoint beside api, when there is one.
func (hr *hearing) handler(api http.Handler) http.Handler {
	if hr.unsub == nil {
		return api
	}
	mux := http.NewServeMux()
	mux.Handle(hr.path, hr.unsub)
	mux.Handle("/", api)
	return mux
}
