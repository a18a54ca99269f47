package transport_test

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/transport"
)

// rcpt is the address of recipient i in the fault tests' calls.
func rcpt(i int) string { return fmt.Sprintf("r%02d@example.org", i) }

// newCall is a message.send call to n recipients rcpt(0)... with a text
// that needs dot-stuffing.
func newCall(n int, bcc string) *postroom.Call {
	c := &postroom.Call{Message: postroom.Message{
		FromEmail: "sender@example.org", Subject: "hello",
		Text: "hello\n.a line with a dot\n.\nend", BCC: bcc,
	}}
	for i := range n {
		c.Recipients = append(c.Recipients, postroom.Recipient{Email: rcpt(i)})
	}
	return c
}

// want is an expected result: Status, and a prefix of Reason.
type want struct {
	status postroom.Status
	reason string
}

func checkResults(t *testing.T, results []postroom.Result, wants []want) {
	t.Helper()
	for i, r := range results {
		w := wants[min(i, len(wants)-1)]
		// Which recipients meet an unusable transport themselves and which
		// are not attempted after it depends on the workers' timing; both
		// say what is wrong.
		unattempted := func(s string) string {
			return strings.Replace(s, "transport-unusable: not attempted: ", "transport-unusable: ", 1)
		}
		if r.Status != w.status || !strings.HasPrefix(unattempted(r.Reason), unattempted(w.reason)) {
			t.Errorf("recipient %d (%s): %s %q, want %s %q…", i, r.Email, r.Status, r.Reason, w.status, w.reason)
		}
	}
}

func TestSMTPFaultsThroughMailer(t *testing.T) {
	t.Parallel() // its cases mostly wait for timeouts: with the other such table
	// short is a timeout that the scripted hang (until the client cuts)
	// always meets, and ordinary replies on loopback never do.
	const short = 2 * time.Second
	hang := smtptest.Fault{Delay: time.Hour}                       // the server waits until the client cuts
	big := base64.StdEncoding.EncodeToString(make([]byte, 10<<20)) // beyond loopback buffers
	tests := []struct {
		name        string
		srv         smtptest.Options
		tr          transport.SMTPOptions
		n           int
		bcc         string
		attachment  string
		concurrency int
		wants       []want
		wantErr     error // errors.Is on Mailer.Send's error
		wantCut     int
	}{
		{
			name:  "greeting 421",
			srv:   smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Greeting}, smtptest.Fault{Code: 421, Text: "busy"})},
			n:     2,
			wants: []want{{postroom.StatusDeferred, "soft-bounce: 421"}},
		},
		{
			name:    "greeting 554 stops the call",
			srv:     smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Greeting}, smtptest.Fault{Code: 554, Text: "no service"})},
			n:       3,
			wants:   []want{{postroom.StatusDeferred, "transport-unusable: 554 5.0.0 no service"}},
			wantErr: postroom.ErrTransportUnusable,
		},
		{
			name:    "TLS handshake fails verification",
			srv:     smtptest.Options{TLS: smtptest.TLSStartTLS},
			tr:      transport.SMTPOptions{TLS: transport.StartTLSRequired, TLSConfig: &tls.Config{}},
			n:       3,
			wants:   []want{{postroom.StatusDeferred, "transport-unusable: relay's TLS certificate is not signed by a trusted authority"}},
			wantErr: postroom.ErrTransportUnusable,
		},
		{
			name:    "STARTTLS required but not offered",
			tr:      transport.SMTPOptions{TLS: transport.StartTLSRequired},
			n:       3,
			wants:   []want{{postroom.StatusDeferred, "transport-unusable: relay offers no STARTTLS"}},
			wantErr: transport.ErrTLSUnavailable,
		},
		{
			name:    "AUTH 535 stops the call",
			srv:     smtptest.Options{Users: map[string]string{"u": "right"}},
			tr:      transport.SMTPOptions{Username: "u", Password: "wrong", AllowInsecureAuth: true},
			n:       20,
			wants:   []want{{postroom.StatusDeferred, "transport-unusable: "}}, // the reply, or "not attempted: " and the reply
			wantErr: postroom.ErrTransportUnusable,
		},
		{
			name:  "AUTH 454 is temporary",
			srv:   smtptest.Options{Users: map[string]string{"u": "p"}, Faults: smtptest.At(smtptest.When{Stage: smtptest.Auth}, smtptest.Fault{Code: 454, Enhanced: "4.7.0", Text: "try later"})},
			tr:    transport.SMTPOptions{Username: "u", Password: "p", AllowInsecureAuth: true},
			n:     2,
			wants: []want{{postroom.StatusDeferred, "soft-bounce: 454 4.7.0 try later"}},
		},
		{
			name:    "AUTH refused in plaintext",
			srv:     smtptest.Options{Users: map[string]string{"u": "p"}},
			tr:      transport.SMTPOptions{Username: "u", Password: "p"},
			n:       2,
			wants:   []want{{postroom.StatusDeferred, "transport-unusable: relay offers no STARTTLS, and credentials are only sent under TLS"}},
			wantErr: transport.ErrInsecureAuth,
		},
		{
			name:  "MAIL 451",
			srv:   smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Mail}, smtptest.Fault{Code: 451, Enhanced: "4.3.0", Text: "later"})},
			n:     2,
			wants: []want{{postroom.StatusDeferred, "soft-bounce: 451 4.3.0 later"}},
		},
		{
			name:  "MAIL 550",
			srv:   smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Mail}, smtptest.Fault{Code: 550, Enhanced: "5.7.1", Text: "sender refused"})},
			n:     2,
			wants: []want{{postroom.StatusRejected, "hard-bounce: 550 5.7.1 sender refused"}},
		},
		{
			name: "RCPT per address",
			srv: smtptest.Options{Faults: smtptest.Each(
				smtptest.At(smtptest.When{Stage: smtptest.Rcpt, Addr: rcpt(0)}, smtptest.Fault{Code: 450, Enhanced: "4.2.1"}),
				smtptest.At(smtptest.When{Stage: smtptest.Rcpt, Addr: rcpt(1)}, smtptest.Fault{Code: 451}),
				smtptest.At(smtptest.When{Stage: smtptest.Rcpt, Addr: rcpt(2)}, smtptest.Fault{Code: 452, Enhanced: "4.5.3", Text: "too many recipients"}),
				smtptest.At(smtptest.When{Stage: smtptest.Rcpt, Addr: rcpt(3)}, smtptest.Fault{Code: 550, Enhanced: "5.1.1", Text: "no such user"}),
				smtptest.At(smtptest.When{Stage: smtptest.Rcpt, Addr: rcpt(4)}, smtptest.Fault{Code: 552, Enhanced: "5.5.3", Text: "too many recipients"}),
			)},
			n: 6,
			wants: []want{
				{postroom.StatusDeferred, "soft-bounce: 450 4.2.1"},
				{postroom.StatusDeferred, "soft-bounce: 451"},
				{postroom.StatusDeferred, "soft-bounce: 452 4.5.3 too many recipients"},
				{postroom.StatusRejected, "hard-bounce: 550 5.1.1 no such user"},
				{postroom.StatusDeferred, "soft-bounce: 552 5.5.3 too many recipients"},
				{postroom.StatusSent, ""},
			},
		},
		{
			name:  "bcc RCPT 550",
			srv:   smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Rcpt, Addr: "bcc2@example.net"}, smtptest.Fault{Code: 550, Enhanced: "5.1.1", Text: "unknown"})},
			n:     3,
			bcc:   "bcc1@example.net, bcc2@example.net",
			wants: []want{{postroom.StatusSent, "bcc-rejected: bcc2@example.net (550 5.1.1 unknown)"}},
		},
		{
			name:  "recipient refused, bcc accepted: nobody gets it",
			srv:   smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Rcpt, Addr: rcpt(1)}, smtptest.Fault{Code: 550})},
			n:     3,
			bcc:   "bcc1@example.net",
			wants: []want{{postroom.StatusSent, ""}, {postroom.StatusRejected, "hard-bounce: 550"}, {postroom.StatusSent, ""}},
		},
		{
			name:  "RCPT 421 then disconnect, next recipient redials",
			srv:   smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Rcpt, Addr: rcpt(0)}, smtptest.Fault{Code: 421, Close: true})},
			n:     3,
			wants: []want{{postroom.StatusDeferred, "soft-bounce: 421"}, {postroom.StatusSent, ""}},
		},
		{
			name:  "DATA 554",
			srv:   smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Data, Addr: rcpt(1)}, smtptest.Fault{Code: 554, Text: "no"})},
			n:     3,
			wants: []want{{postroom.StatusSent, ""}, {postroom.StatusRejected, "hard-bounce: 554"}, {postroom.StatusSent, ""}},
		},
		{
			// A message larger than the socket buffers, so the client is
			// still writing when the server cuts. (A small message may be
			// in the kernel whole, final dot included, before the reset
			// arrives: then the client cannot know, and unknown is the
			// honest answer; the load test covers that case.)
			name:       "drop mid-DATA is temporary",
			srv:        smtptest.Options{DiscardData: true, Faults: smtptest.At(smtptest.When{Stage: smtptest.Body, Addr: rcpt(0)}, smtptest.Fault{Drop: true, AfterBytes: 1 << 20})},
			n:          2,
			attachment: big,
			wants:      []want{{postroom.StatusDeferred, "connection-failed"}, {postroom.StatusSent, ""}},
		},
		{
			name:    "drop after the dot is unknown",
			srv:     smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.EndOfData, Addr: rcpt(1)}, smtptest.Fault{Drop: true})},
			tr:      transport.SMTPOptions{Retry: transport.RetryPolicy{Attempts: 3, Base: time.Millisecond}},
			n:       3,
			wants:   []want{{postroom.StatusSent, ""}, {postroom.StatusUnknown, "connection-lost-after-data"}, {postroom.StatusSent, ""}},
			wantCut: 1,
		},
		{
			name:  "451 after the dot",
			srv:   smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.EndOfData, Addr: rcpt(0)}, smtptest.Fault{Code: 451, Enhanced: "4.3.0"})},
			n:     2,
			wants: []want{{postroom.StatusDeferred, "soft-bounce: 451 4.3.0"}, {postroom.StatusSent, ""}},
		},
		{
			name:  "554 after the dot",
			srv:   smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.EndOfData, Addr: rcpt(0)}, smtptest.Fault{Code: 554, Enhanced: "5.6.0", Text: "content refused"})},
			n:     2,
			wants: []want{{postroom.StatusRejected, "hard-bounce: 554 5.6.0 content refused"}, {postroom.StatusSent, ""}},
		},
		{
			name:        "250 then the RSET drops: redial, nothing lost",
			srv:         smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Reset, FirstAttempt: true}, smtptest.Fault{Drop: true})},
			n:           3,
			concurrency: 1,
			wants:       []want{{postroom.StatusSent, ""}},
		},
		{
			name:  "slow greeting past ConnectTimeout",
			srv:   smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Greeting}, hang)},
			tr:    transport.SMTPOptions{ConnectTimeout: short},
			n:     2,
			wants: []want{{postroom.StatusDeferred, "timeout"}},
		},
		{
			name:  "slow MAIL past CommandTimeout",
			srv:   smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Mail}, hang)},
			tr:    transport.SMTPOptions{CommandTimeout: short},
			n:     2,
			wants: []want{{postroom.StatusDeferred, "timeout"}},
		},
		{
			name:       "slow reading past DataTimeout",
			srv:        smtptest.Options{DiscardData: true, Faults: smtptest.At(smtptest.When{Stage: smtptest.Body, Addr: rcpt(0)}, hang)},
			tr:         transport.SMTPOptions{DataTimeout: short},
			n:          1,
			attachment: big,
			wants:      []want{{postroom.StatusDeferred, "timeout"}},
		},
		{
			name:  "slow reply after the dot past EndOfDataTimeout",
			srv:   smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.EndOfData, Addr: rcpt(0)}, hang)},
			tr:    transport.SMTPOptions{EndOfDataTimeout: short, Retry: transport.RetryPolicy{Attempts: 3, Base: time.Millisecond}},
			n:     2,
			wants: []want{{postroom.StatusUnknown, "connection-lost-after-data"}, {postroom.StatusSent, ""}},
		},
		{
			name:  "malformed reply to MAIL",
			srv:   smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Mail, FirstAttempt: true}, smtptest.Fault{Raw: "hello there"})},
			n:     1,
			wants: []want{{postroom.StatusDeferred, "connection-failed"}},
		},
		{
			name:  "reply code out of range to RCPT",
			srv:   smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Rcpt, Addr: rcpt(0)}, smtptest.Fault{Raw: "650 what"})},
			n:     2,
			wants: []want{{postroom.StatusDeferred, ""}, {postroom.StatusSent, ""}},
		},
		{
			name:    "malformed reply after the dot is unknown",
			srv:     smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.EndOfData, Addr: rcpt(0)}, smtptest.Fault{Raw: "2x0 ok"})},
			n:       2,
			wants:   []want{{postroom.StatusUnknown, "connection-lost-after-data"}, {postroom.StatusSent, ""}},
			wantCut: 1,
		},
		{
			name:  "retry passes a first-attempt 451",
			srv:   smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Rcpt, FirstAttempt: true}, smtptest.Fault{Code: 451})},
			tr:    transport.SMTPOptions{Retry: transport.RetryPolicy{Attempts: 2, Base: time.Millisecond}},
			n:     3,
			wants: []want{{postroom.StatusSent, ""}},
		},
		{
			name:  "SIZE too small: rejected before DATA",
			srv:   smtptest.Options{MaxMessageBytes: 200, Faults: smtptest.At(smtptest.When{Stage: smtptest.Mail}, smtptest.Fault{Code: 421, Text: "MAIL must not be sent"})},
			n:     2,
			wants: []want{{postroom.StatusRejected, "hard-bounce: 552 5.3.4"}},
		},
	}
	// Each case has its own server and transport: they run in parallel,
	// so that the cases that wait for a timeout wait together.
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := smtptest.NewServer(t, tt.srv)
			results, err := sendThroughMailer(t, newSMTP(t, srv, tt.tr), mailerSend{Concurrency: tt.concurrency, N: tt.n, BCC: tt.bcc, Attachment: tt.attachment})
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("Send: %v, want %v", err, tt.wantErr)
			}
			checkResults(t, results, tt.wants)
			smtptest.CheckLedger(t, srv, results)
			if cut := countCut(srv); cut != tt.wantCut {
				t.Errorf("server cut %d connections after the dot, want %d", cut, tt.wantCut)
			}
		})
	}
}

// mailerSend is a call for sendThroughMailer: N recipients, with BCC, and
// an attachment of the base64 content Attachment when not empty, sent
// through a Mailer of the given Concurrency (0 for the default).
type mailerSend struct {
	Concurrency int
	N           int
	BCC         string
	Attachment  string
}

// sendThroughMailer sends s through a Mailer over tr, and checks that every
// recipient has a result.
func sendThroughMailer(t *testing.T, tr postroom.Transport, s mailerSend) ([]postroom.Result, error) {
	t.Helper()
	m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}, Concurrency: s.Concurrency})
	if err != nil {
		t.Fatal(err)
	}
	call := newCall(s.N, s.BCC)
	if s.Attachment != "" {
		call.Message.Attachments = []postroom.Attachment{{Name: "big.bin", ContentType: "application/octet-stream", Content: s.Attachment}}
	}
	results, err := m.Send(t.Context(), call)
	if len(results) != s.N {
		t.Fatalf("%d results, want %d (err %v)", len(results), s.N, err)
	}
	return results, err
}

// countCut is how many messages the server saw cut after the end of data.
func countCut(srv *smtptest.Server) int {
	cut := 0
	for _, msg := range srv.Messages() {
		if msg.Cut {
			cut++
		}
	}
	return cut
}

// TestSMTPCanceledMidBatch cancels the call while the server is answering
// recipient 3's RCPT: the first three are sent, the rest deferred
// (canceled), and nothing more reaches the server.
func TestSMTPCanceledMidBatch(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var canceledAt atomic.Int32
	srv := smtptest.NewServer(t, smtptest.Options{Faults: func(c smtptest.Command) smtptest.Fault {
		if c.Stage == smtptest.Rcpt && c.Addr == rcpt(3) {
			canceledAt.Store(int32(c.Conn))
			cancel()
			return smtptest.Fault{Delay: time.Hour} // until the client cuts
		}
		return smtptest.Fault{}
	}})
	tr := newSMTP(t, srv, transport.SMTPOptions{})
	m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The server holds recipient 3's RCPT until the client cuts: Send
	// returns only if the cancel reaches the socket.
	results, err := m.Send(ctx, newCall(10, ""))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Send: %v, want context.Canceled", err)
	}
	checkResults(t, results, []want{
		{postroom.StatusSent, ""}, {postroom.StatusSent, ""}, {postroom.StatusSent, ""},
		{postroom.StatusDeferred, "canceled"},
	})
	smtptest.CheckLedger(t, srv, results)
	if n := len(srv.Messages()); n != 3 {
		t.Errorf("server holds %d messages, want 3", n)
	}
}
