package transport_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/transport"
	"github.com/postroom/postroom/transport/transporttest"
)

func TestSMTPConformanceChunking(t *testing.T) {
	transporttest.Run(t, func(t *testing.T) (postroom.Transport, func(string) ([]byte, bool)) {
		srv := smtptest.NewServer(t, smtptest.Options{Chunking: true})
		return newSMTP(t, srv, transport.SMTPOptions{}), delivered(srv)
	})
}

// recorder keeps a copy of every envelope's data handed to the transport,
// by Envelope.To[0].
type recorder struct {
	mu   sync.Mutex
	sent map[string][]byte
}

func (r *recorder) wrap(tr postroom.Transport) postroom.Transport {
	r.sent = map[string][]byte{}
	return postroom.TransportFunc(func(ctx context.Context, env *postroom.Envelope) error {
		r.mu.Lock()
		r.sent[env.To[0]] = bytes.Clone(env.Data)
		r.mu.Unlock()
		return tr.Send(ctx, env)
	})
}

// TestSMTPChunkingThroughMailer is the fault table of BDAT: a server that
// offers CHUNKING, faults at the BDAT command, during its chunk and at the
// reply to LAST. Every message the server holds must have come as a BDAT
// chunk (or with DATA when chunking is disabled), byte for byte the
// envelope's data.
func TestSMTPChunkingThroughMailer(t *testing.T) {
	t.Parallel() // its cases mostly wait for timeouts: with the other such table
	// short is a timeout that the scripted hang (until the client cuts)
	// always meets, and ordinary replies on loopback never do.
	const short = 2 * time.Second
	retry := transport.RetryPolicy{Attempts: 3, Base: time.Millisecond}
	big := base64.StdEncoding.EncodeToString(make([]byte, 10<<20)) // beyond loopback buffers
	tests := []struct {
		name        string
		faults      func(smtptest.Command) smtptest.Fault
		discardData bool
		tr          transport.SMTPOptions
		n           int
		bcc         string
		attachment  string
		wants       []want
		wantCut     int
		wantChunked bool
		wantNoData  string // an address whose transaction never reached BDAT
	}{
		{
			name:        "success: the bytes as they are, lines with a leading dot unstuffed",
			n:           3,
			wants:       []want{{postroom.StatusSent, ""}},
			wantChunked: true,
		},
		{
			name:        "DisableChunking sends DATA",
			tr:          transport.SMTPOptions{DisableChunking: true},
			n:           3,
			wants:       []want{{postroom.StatusSent, ""}},
			wantChunked: false,
		},
		{
			name:        "BDAT 554",
			faults:      smtptest.At(smtptest.When{Stage: smtptest.Data, Addr: rcpt(1)}, smtptest.Fault{Code: 554, Enhanced: "5.6.0", Text: "no"}),
			n:           3,
			wants:       []want{{postroom.StatusSent, ""}, {postroom.StatusRejected, "hard-bounce: 554 5.6.0 no"}, {postroom.StatusSent, ""}},
			wantChunked: true,
		},
		{
			name:        "451 to LAST",
			faults:      smtptest.At(smtptest.When{Stage: smtptest.EndOfData, Addr: rcpt(0)}, smtptest.Fault{Code: 451, Enhanced: "4.3.0", Text: "later"}),
			n:           2,
			wants:       []want{{postroom.StatusDeferred, "soft-bounce: 451 4.3.0 later"}, {postroom.StatusSent, ""}},
			wantChunked: true,
		},
		{
			name:        "554 to LAST",
			faults:      smtptest.At(smtptest.When{Stage: smtptest.EndOfData, Addr: rcpt(0)}, smtptest.Fault{Code: 554, Enhanced: "5.6.0", Text: "content refused"}),
			n:           2,
			wants:       []want{{postroom.StatusRejected, "hard-bounce: 554 5.6.0 content refused"}, {postroom.StatusSent, ""}},
			wantChunked: true,
		},
		{
			name:        "451 to LAST is retried",
			faults:      smtptest.At(smtptest.When{Stage: smtptest.EndOfData, FirstAttempt: true}, smtptest.Fault{Code: 451}),
			tr:          transport.SMTPOptions{Retry: retry},
			n:           3,
			wants:       []want{{postroom.StatusSent, ""}},
			wantChunked: true,
		},
		{
			name:        "RCPT refused: no BDAT",
			faults:      smtptest.At(smtptest.When{Stage: smtptest.Rcpt, Addr: rcpt(0)}, smtptest.Fault{Code: 550, Enhanced: "5.1.1"}),
			n:           2,
			wants:       []want{{postroom.StatusRejected, "hard-bounce: 550 5.1.1"}, {postroom.StatusSent, ""}},
			wantChunked: true,
			wantNoData:  rcpt(0),
		},
		{
			name:        "bcc RCPT 550",
			faults:      smtptest.At(smtptest.When{Stage: smtptest.Rcpt, Addr: "bcc2@example.net"}, smtptest.Fault{Code: 550, Enhanced: "5.1.1", Text: "unknown"}),
			n:           2,
			bcc:         "bcc1@example.net, bcc2@example.net",
			wants:       []want{{postroom.StatusSent, "bcc-rejected: bcc2@example.net (550 5.1.1 unknown)"}},
			wantChunked: true,
		},
		{
			name:        "drop mid-chunk is retried and delivered once",
			faults:      smtptest.At(smtptest.When{Stage: smtptest.Body, Addr: rcpt(0), FirstAttempt: true}, smtptest.Fault{Drop: true, AfterBytes: 1 << 20}),
			discardData: true,
			tr:          transport.SMTPOptions{Retry: retry},
			n:           2,
			attachment:  big,
			wants:       []want{{postroom.StatusSent, ""}},
			wantChunked: true,
		},
		{
			name:        "drop mid-chunk without retries is deferred",
			faults:      smtptest.At(smtptest.When{Stage: smtptest.Body, Addr: rcpt(0), FirstAttempt: true}, smtptest.Fault{Drop: true, AfterBytes: 1 << 20}),
			discardData: true,
			n:           2,
			attachment:  big,
			wants:       []want{{postroom.StatusDeferred, "connection-failed"}, {postroom.StatusSent, ""}},
			wantChunked: true,
		},
		{
			name:        "drop after LAST is unknown, not retried",
			faults:      smtptest.At(smtptest.When{Stage: smtptest.EndOfData, Addr: rcpt(1)}, smtptest.Fault{Drop: true}),
			tr:          transport.SMTPOptions{Retry: retry},
			n:           3,
			wants:       []want{{postroom.StatusSent, ""}, {postroom.StatusUnknown, "connection-lost-after-data"}, {postroom.StatusSent, ""}},
			wantCut:     1,
			wantChunked: true,
		},
		{
			name:        "slow reply to LAST past EndOfDataTimeout is unknown",
			faults:      smtptest.At(smtptest.When{Stage: smtptest.EndOfData, Addr: rcpt(0)}, smtptest.Fault{Delay: time.Hour}),
			tr:          transport.SMTPOptions{EndOfDataTimeout: short, Retry: retry},
			n:           2,
			wants:       []want{{postroom.StatusUnknown, "connection-lost-after-data"}, {postroom.StatusSent, ""}},
			wantChunked: true,
		},
		{
			name:        "slow reading of the chunk past DataTimeout",
			faults:      smtptest.At(smtptest.When{Stage: smtptest.Body, Addr: rcpt(0)}, smtptest.Fault{Delay: time.Hour}),
			discardData: true,
			tr:          transport.SMTPOptions{DataTimeout: short},
			n:           1,
			attachment:  big,
			wants:       []want{{postroom.StatusDeferred, "timeout"}},
			wantChunked: true,
		},
	}
	// Each case has its own server and transport: they run in parallel,
	// so that the cases that wait for a timeout wait together.
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var dataFor sync.Map // address → *atomic.Int32: Data-stage commands seen
			srv := smtptest.NewServer(t, smtptest.Options{Chunking: true, DiscardData: tt.discardData, Faults: func(c smtptest.Command) smtptest.Fault {
				if c.Stage == smtptest.Data {
					n, _ := dataFor.LoadOrStore(c.Addr, new(atomic.Int32))
					n.(*atomic.Int32).Add(1)
				}
				if tt.faults == nil {
					return smtptest.Fault{}
				}
				return tt.faults(c)
			}})
			var rec recorder
			results, err := sendThroughMailer(t, rec.wrap(newSMTP(t, srv, tt.tr)), mailerSend{N: tt.n, BCC: tt.bcc, Attachment: tt.attachment})
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			checkResults(t, results, tt.wants)
			smtptest.CheckLedger(t, srv, results)
			for _, msg := range srv.Messages() {
				if msg.Chunked != tt.wantChunked {
					t.Errorf("message to %s: Chunked %v, want %v", msg.To[0], msg.Chunked, tt.wantChunked)
				}
				if tt.discardData {
					continue
				}
				want := rec.sent[msg.To[0]]
				if !bytes.Equal(msg.Data, want) {
					t.Errorf("message to %s: the server got %d bytes, not the envelope's %d", msg.To[0], len(msg.Data), len(want))
				}
				if !bytes.Contains(msg.Data, []byte("\r\n.a line with a dot\r\n.\r\n")) {
					t.Errorf("message to %s lacks the lines that start with a dot", msg.To[0])
				}
			}
			if cut := countCut(srv); cut != tt.wantCut {
				t.Errorf("server cut %d connections after LAST, want %d", cut, tt.wantCut)
			}
			if tt.wantNoData != "" {
				if n, ok := dataFor.Load(tt.wantNoData); ok {
					t.Errorf("the server saw %d BDAT commands for %s, want none", n.(*atomic.Int32).Load(), tt.wantNoData)
				}
			}
		})
	}
}
