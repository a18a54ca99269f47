package transport_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/transport"
)

// TestSMTPStats: each outcome of Send counts once under its name, and the
// counters of the wire agree with the client's own sockets: Dials with the
// sockets dialed, BytesWritten with the bytes written to them.
func TestSMTPStats(t *testing.T) {
	const (
		perm      = "perm@example.org"
		temp      = "temp@example.org"
		cut       = "cut@example.org"
		retried   = "retried@example.org"
		okAddress = "ok@example.org"
		held      = "held@example.org"
	)
	reached := make(chan struct{})
	srv := smtptest.NewServer(t, smtptest.Options{Faults: smtptest.Each(
		smtptest.At(smtptest.When{Stage: smtptest.Rcpt, Addr: perm}, smtptest.Fault{Code: 550, Enhanced: "5.1.1", Text: "no such user"}),
		smtptest.At(smtptest.When{Stage: smtptest.Rcpt, Addr: temp}, smtptest.Fault{Code: 451, Enhanced: "4.3.0", Text: "later"}),
		smtptest.At(smtptest.When{Stage: smtptest.Rcpt, Addr: retried, FirstAttempt: true}, smtptest.Fault{Code: 451, Enhanced: "4.3.0", Text: "later"}),
		smtptest.At(smtptest.When{Stage: smtptest.EndOfData, Addr: cut}, smtptest.Fault{Drop: true}),
		func(c smtptest.Command) smtptest.Fault {
			if c.Stage == smtptest.Rcpt && c.Addr == held {
				close(reached)
				return smtptest.Fault{Delay: time.Hour} // until the client cuts
			}
			return smtptest.Fault{}
		},
	)})
	socks := newSockets()
	tr := newSMTP(t, srv, transport.SMTPOptions{Dial: socks.dial, Retry: transport.RetryPolicy{Attempts: 2, Base: time.Millisecond}})
	canceled, cancel := context.WithCancel(t.Context())
	go func() {
		<-reached
		cancel()
	}()
	for _, s := range []struct {
		ctx  context.Context
		to   []string
		want func(error) bool
	}{
		{t.Context(), []string{okAddress}, func(err error) bool { return err == nil }},
		{t.Context(), []string{retried}, func(err error) bool { return err == nil }},
		{t.Context(), []string{okAddress, perm}, func(err error) bool { var pe *postroom.PartialError; return errors.As(err, &pe) }},
		{t.Context(), []string{perm}, isKind(postroom.DeliveryPermanent)},
		{t.Context(), []string{temp}, isKind(postroom.DeliveryTemporary)},
		{t.Context(), []string{cut}, isKind(postroom.DeliveryUncertain)},
		{canceled, []string{held}, func(err error) bool { return errors.Is(err, context.Canceled) }},
		{t.Context(), []string{okAddress}, func(err error) bool { return err == nil }},
	} {
		if err := tr.Send(s.ctx, envelope("s", s.to...)); !s.want(err) {
			t.Fatalf("Send to %v: unexpected %v", s.to, err)
		}
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	// After Close: unusable.
	if err := tr.Send(t.Context(), envelope("late", okAddress)); !errors.Is(err, postroom.ErrTransportUnusable) {
		t.Fatalf("Send after Close: %v", err)
	}
	got := tr.Stats()
	dialed, _ := socks.counts()
	want := transport.SMTPStats{
		Sent: 3, Partial: 1, Permanent: 1, Temporary: 1, Uncertain: 1, Canceled: 1, Unusable: 1,
		Retries:      2, // retried, and temp's second try
		Dials:        int64(dialed),
		BytesWritten: socks.wrote.Load(),
		ConnWait:     got.ConnWait,
	}
	if got != want {
		t.Errorf("Stats() = %+v\nwant       %+v", got, want)
	}
	if dialed != 3 || got.DialFailures != 0 {
		t.Errorf("%d sockets dialed, %d dial failures; want 3 (after the cut and the cancel), no failure", dialed, got.DialFailures)
	}
	if got.ConnWait <= 0 {
		t.Errorf("ConnWait %v, want the time spent getting connections", got.ConnWait)
	}
}

func isKind(k postroom.DeliveryKind) func(error) bool {
	return func(err error) bool {
		var de *postroom.DeliveryError
		return errors.As(err, &de) && de.Kind == k && !errors.Is(err, context.Canceled)
	}
}

// TestSMTPStatsConcurrent: counters kept by Sends on many goroutines add
// up (run with -race: Stats reads while Sends write).
func TestSMTPStatsConcurrent(t *testing.T) {
	srv := smtptest.NewServer(t, smtptest.Options{})
	tr := newSMTP(t, srv, transport.SMTPOptions{MaxConns: 3})
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := tr.Send(t.Context(), envelope(fmt.Sprint(i), rcpt(i))); err != nil {
				t.Errorf("Send %d: %v", i, err)
			}
			_ = tr.Stats()
		})
	}
	wg.Wait()
	if s := tr.Stats(); s.Sent != n || s.Dials < 1 || s.Dials > 3 {
		t.Errorf("Stats() = %+v; want %d sent over 1 to 3 connections", s, n)
	}
}

// TestSMTPStatsDialFailures: a refused login counts a dial and a dial
// failure, and the Send as unusable.
func TestSMTPStatsDialFailures(t *testing.T) {
	srv := smtptest.NewServer(t, smtptest.Options{Users: map[string]string{"u": "right"}})
	tr := newSMTP(t, srv, transport.SMTPOptions{Username: "u", Password: "wrong", AllowInsecureAuth: true})
	if err := tr.Send(t.Context(), envelope("a", rcpt(0))); !errors.Is(err, postroom.ErrTransportUnusable) {
		t.Fatalf("Send: %v", err)
	}
	if s := tr.Stats(); s.Dials != 1 || s.DialFailures != 1 || s.Unusable != 1 || s.Sent != 0 {
		t.Errorf("Stats() = %+v; want 1 dial, 1 failure, 1 unusable", s)
	}
}
