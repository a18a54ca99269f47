package transport_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/transport"
)

// capture is a slog.Handler that keeps every record it is given at or
// above its level, and renders them as text and as JSON to search.
type capture struct {
	level slog.Level
	mu    sync.Mutex
	recs  []slog.Record
}

func (c *capture) Enabled(_ context.Context, l slog.Level) bool { return l >= c.level }

// requestKey is a ctx key whose value capture adds to a record as
// "request": the tests see which records got the Send's ctx.
type requestKey struct{}

func (c *capture) Handle(ctx context.Context, r slog.Record) error {
	r = r.Clone()
	if v, ok := ctx.Value(requestKey{}).(string); ok {
		r.AddAttrs(slog.String("request", v))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs = append(c.recs, r)
	return nil
}

func (c *capture) WithAttrs([]slog.Attr) slog.Handler { panic("the transport adds no attributes") }
func (c *capture) WithGroup(string) slog.Handler      { panic("the transport uses no groups") }

// records returns the records with message msg, each as its attributes.
func (c *capture) records(msg string) []map[string]slog.Value {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []map[string]slog.Value
	for _, r := range c.recs {
		if r.Message != msg {
			continue
		}
		m := map[string]slog.Value{"level": slog.StringValue(r.Level.String())}
		r.Attrs(func(a slog.Attr) bool {
			m[a.Key] = a.Value
			return true
		})
		out = append(out, m)
	}
	return out
}

// traced returns the trace's lines, "C: ..." or "S: ...", in order.
func (c *capture) traced() []string {
	var lines []string
	for _, r := range c.records("smtp trace") {
		lines = append(lines, r["dir"].String()+": "+r["line"].String())
	}
	return lines
}

// text renders every record with slog's text and JSON handlers.
func (c *capture) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b bytes.Buffer
	th := slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})
	jh := slog.NewJSONHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})
	for _, r := range c.recs {
		_ = th.Handle(context.Background(), r)
		_ = jh.Handle(context.Background(), r)
	}
	return b.String()
}

func newCapture(level slog.Level) (*capture, *slog.Logger) {
	c := &capture{level: level}
	return c, slog.New(c)
}

// The secrets of the log tests: none may show in any record, in any form
// an AUTH mechanism sends it.
const (
	logUser     = "user@example.org"
	logPassword = "pw-7Hq2-never-logged"
	bodyMarker  = "BODY-MARKER-k3J9"
)

func secretForms() []string {
	b64 := base64.StdEncoding.EncodeToString
	return []string{
		logPassword, bodyMarker,
		b64([]byte(logPassword)),                                                       // LOGIN
		b64([]byte("\x00" + logUser + "\x00" + logPassword)),                           // PLAIN
		b64([]byte("user=" + logUser + "\x01auth=Bearer " + logPassword + "\x01\x01")), // XOAUTH2
	}
}

// markedEnvelope is a message whose body holds bodyMarker.
func markedEnvelope(id, to string) *postroom.Envelope {
	return &postroom.Envelope{SendID: id, From: "sender@example.org", To: []string{to},
		Data: []byte("From: a@example.org\r\nSubject: hi\r\n\r\n" + bodyMarker + "\r\n.dot line\r\n")}
}

// checkNoSecrets fails if any record shows a secret.
func checkNoSecrets(t *testing.T, c *capture) {
	t.Helper()
	text := c.text()
	for _, s := range secretForms() {
		if strings.Contains(text, s) {
			t.Errorf("the log shows %q:\n%s", s, text)
		}
	}
}

// TestSMTPLogSession: a session over STARTTLS with AUTH, logged at debug
// level with each mechanism and both ways of sending the message: the
// dial, TLS and AUTH records say what happened, the trace shows the
// commands and replies, and neither the AUTH exchange nor the message's
// text shows anywhere but as "[redacted]" and a size.
func TestSMTPLogSession(t *testing.T) {
	for _, mech := range []transport.AuthMechanism{transport.AuthPlain, transport.AuthLogin, transport.AuthCRAMMD5, transport.AuthXOAUTH2} {
		for _, chunking := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/chunking=%v", mech, chunking), func(t *testing.T) {
				srv := smtptest.NewServer(t, smtptest.Options{TLS: smtptest.TLSStartTLS, Users: map[string]string{logUser: logPassword}})
				c, logger := newCapture(slog.LevelDebug)
				tr := newSMTP(t, srv, transport.SMTPOptions{TLS: transport.StartTLSRequired, TLSConfig: srv.ClientTLSConfig(),
					Username: logUser, Password: logPassword, Auth: mech, DisableChunking: !chunking, Logger: logger})
				env := markedEnvelope("id-1", rcpt(0))
				if err := tr.Send(t.Context(), env); err != nil {
					t.Fatalf("Send: %v", err)
				}
				if err := tr.Close(); err != nil {
					t.Fatal(err)
				}
				checkNoSecrets(t, c)

				one := func(msg string) map[string]slog.Value {
					t.Helper()
					rs := c.records(msg)
					if len(rs) != 1 {
						t.Fatalf("%d %q records, want 1:\n%s", len(rs), msg, c.text())
					}
					return rs[0]
				}
				dial := one("smtp dial")
				if dial["conn"].Uint64() != 1 || dial["addr"].String() != srv.Addr() || dial["level"].String() != "INFO" {
					t.Errorf("dial record %v", dial)
				}
				tlsRec := one("smtp tls")
				if tlsRec["version"].String() != "TLS 1.3" || tlsRec["cipher"].String() == "" || !strings.Contains(tlsRec["peer"].String(), "CN=smtptest") {
					t.Errorf("tls record %v", tlsRec)
				}
				if a := one("smtp auth"); a["mechanism"].String() != string(mech) || a["conn"].Uint64() != 1 {
					t.Errorf("auth record %v", a)
				}
				if s := one("smtp send"); s["send_id"].String() != "id-1" || s["outcome"].String() != "sent" || s["level"].String() != "DEBUG" {
					t.Errorf("send record %v", s)
				}

				trace := c.traced()
				wantSize := len(env.Data) // BDAT: the chunk as it is
				if !chunking {
					wantSize += len(".") + len(".\r\n") // one dot stuffed, the final dot
				}
				for _, want := range []string{
					"C: EHLO ", "C: STARTTLS", "S: 220 ", "C: AUTH " + string(mech), "S: 235 ",
					"C: MAIL FROM:<sender@example.org>", "C: RCPT TO:<" + rcpt(0) + ">",
					fmt.Sprintf("C: [message text: %d bytes]", wantSize), "C: QUIT",
				} {
					if !slices.ContainsFunc(trace, func(l string) bool { return strings.HasPrefix(l, want) }) {
						t.Errorf("the trace lacks %q:\n%s", want, strings.Join(trace, "\n"))
					}
				}
				if chunking && !slices.Contains(trace, fmt.Sprintf("C: BDAT %d LAST", len(env.Data))) {
					t.Errorf("the trace lacks the BDAT command:\n%s", strings.Join(trace, "\n"))
				}
				// Between AUTH and its 235, the client's lines are redacted
				// whole, the server's challenges too.
				i := slices.IndexFunc(trace, func(l string) bool { return strings.HasPrefix(l, "C: AUTH ") })
				for _, l := range trace[i:] {
					if strings.HasPrefix(l, "S: 235") {
						break
					}
					if l != "C: AUTH "+string(mech) && l != "C: AUTH "+string(mech)+" [redacted]" && l != "C: [redacted]" && l != "S: 334 [redacted]" {
						t.Errorf("trace line %q in the AUTH exchange", l)
					}
				}
			})
		}
	}
}

// TestSMTPLogFailures: a refused login, a retried 451, a redial and a
// pool wait each leave their record, with no secret in any.
func TestSMTPLogFailures(t *testing.T) {
	for _, mech := range []transport.AuthMechanism{transport.AuthPlain, transport.AuthLogin, transport.AuthCRAMMD5, transport.AuthXOAUTH2} {
		t.Run("auth refused/"+string(mech), func(t *testing.T) {
			srv := smtptest.NewServer(t, smtptest.Options{Users: map[string]string{logUser: "other"}})
			c, logger := newCapture(slog.LevelDebug)
			tr := newSMTP(t, srv, transport.SMTPOptions{Username: logUser, Password: logPassword, AllowInsecureAuth: true, Auth: mech, Logger: logger})
			err := tr.Send(t.Context(), markedEnvelope("id-1", rcpt(0)))
			if !errors.Is(err, postroom.ErrTransportUnusable) {
				t.Fatalf("Send: %v, want ErrTransportUnusable", err)
			}
			if err := tr.Send(t.Context(), markedEnvelope("id-2", rcpt(1))); !errors.Is(err, transport.ErrCoolingDown) {
				t.Fatalf("second Send: %v, want ErrCoolingDown", err)
			}
			checkNoSecrets(t, c)
			af := c.records("smtp auth failed")
			if len(af) != 1 || af[0]["code"].Int64()/100 != 5 || af[0]["mechanism"].String() != string(mech) || af[0]["level"].String() != "WARN" {
				t.Errorf("auth failed records %v", af)
			}
			un := c.records("smtp unusable")
			if len(un) != 1 || un[0]["level"].String() != "ERROR" || un[0]["cool_down"].Duration() != transport.DefaultSetupCoolDown || un[0]["code"].Int64() != af[0]["code"].Int64() {
				t.Errorf("unusable records %v; want one, with the cool-down", un)
			}
			if df := c.records("smtp dial failed"); len(df) != 1 {
				t.Errorf("%d dial failed records, want 1 (the cool-down dials nothing)", len(df))
			}
		})
	}
	t.Run("retry", func(t *testing.T) {
		srv := smtptest.NewServer(t, smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Rcpt, FirstAttempt: true}, smtptest.Fault{Code: 451, Enhanced: "4.3.0", Text: "later"})})
		c, logger := newCapture(slog.LevelInfo)
		tr := newSMTP(t, srv, transport.SMTPOptions{Retry: transport.RetryPolicy{Attempts: 2, Base: time.Millisecond}, Logger: logger})
		ctx := context.WithValue(t.Context(), requestKey{}, "req-1")
		if err := tr.Send(ctx, markedEnvelope("id-r", rcpt(0))); err != nil {
			t.Fatalf("Send: %v", err)
		}
		// The records of the Send and of its dial carry its ctx.
		for _, msg := range []string{"smtp retry", "smtp dial"} {
			if rs := c.records(msg); len(rs) == 0 || rs[0]["request"].String() != "req-1" {
				t.Errorf("%s records %v: want the Send's ctx", msg, rs)
			}
		}
		r := c.records("smtp retry")
		if len(r) != 1 || r[0]["send_id"].String() != "id-r" || r[0]["attempt"].Int64() != 2 || r[0]["code"].Int64() != 451 ||
			r[0]["delay"].Duration() < 0 || r[0]["delay"].Duration() > time.Millisecond || !strings.Contains(r[0]["error"].String(), "later") {
			t.Errorf("retry records %v", r)
		}
		if len(c.records("smtp trace")) != 0 || len(c.records("smtp send")) != 0 {
			t.Error("debug records at info level")
		}
	})
	t.Run("redial", func(t *testing.T) {
		srv := smtptest.NewServer(t, smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Reset, FirstAttempt: true}, smtptest.Fault{Drop: true})})
		c, logger := newCapture(slog.LevelInfo)
		tr := newSMTP(t, srv, transport.SMTPOptions{HealthCheckAfter: -1, Logger: logger})
		for i := range 2 {
			if err := tr.Send(t.Context(), markedEnvelope(fmt.Sprint(i), rcpt(i))); err != nil {
				t.Fatalf("Send %d: %v", i, err)
			}
		}
		r := c.records("smtp redial")
		if len(r) != 1 || r[0]["conn"].Uint64() != 1 {
			t.Errorf("redial records %v; want one, of connection 1", r)
		}
		if d := c.records("smtp dial"); len(d) != 2 || d[1]["conn"].Uint64() != 2 {
			t.Errorf("dial records %v; want connections 1 and 2", d)
		}
		if s := tr.Stats(); s.Redials != 1 || s.Dials != 2 {
			t.Errorf("Stats %+v; want 1 redial, 2 dials", s)
		}
	})
	t.Run("pool wait", func(t *testing.T) {
		for _, threshold := range []time.Duration{time.Nanosecond, -1} {
			srv := smtptest.NewServer(t, smtptest.Options{})
			c, logger := newCapture(slog.LevelInfo)
			tr := newSMTP(t, srv, transport.SMTPOptions{PoolWaitLogThreshold: threshold, MaxConns: 1, Logger: logger})
			if err := tr.Send(t.Context(), markedEnvelope("w", rcpt(0))); err != nil {
				t.Fatal(err)
			}
			r := c.records("smtp pool wait")
			if threshold < 0 && len(r) != 0 {
				t.Errorf("threshold %v: %d pool wait records, want none", threshold, len(r))
			}
			if threshold > 0 && (len(r) != 1 || r[0]["waited"].Duration() <= 0 || r[0]["max_conns"].Int64() != 1) {
				t.Errorf("threshold %v: pool wait records %v; want one", threshold, r)
			}
		}
	})
}

// TestSMTPLogSilentLevels: a logger at ERROR gets nothing from a
// successful session, and the transport's default is silent.
func TestSMTPLogSilentLevels(t *testing.T) {
	srv := smtptest.NewServer(t, smtptest.Options{})
	c, logger := newCapture(slog.LevelError)
	tr := newSMTP(t, srv, transport.SMTPOptions{Logger: logger})
	if err := tr.Send(t.Context(), markedEnvelope("a", rcpt(0))); err != nil {
		t.Fatal(err)
	}
	if text := c.text(); text != "" {
		t.Errorf("records at ERROR level from a successful session:\n%s", text)
	}
	quiet := newSMTP(t, srv, transport.SMTPOptions{})
	if err := quiet.Send(t.Context(), markedEnvelope("b", rcpt(1))); err != nil {
		t.Fatal(err)
	}
}
