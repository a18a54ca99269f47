package main

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/httpapi"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/internal/testkit/smtptest"
)

// TestSendLaterBounce runs the server with -database-url, -bounce-listen
// and -bounce-domain: a call sent later is done, its first recipient's
// message bounces afterwards (a DSN to the bounce listener), and GET
// /api/1.0/calls/{id} shows the bounce in "later", by send id, while the
// result stays sent.
func TestSendLaterBounce(t *testing.T) {
	t.Parallel()
	relay := smtptest.NewServer(t, smtptest.Options{})
	db, err := openDatabase(t.Context(), pgtest.DSN(t))
	if err != nil {
		t.Fatalf("openDatabase: %v", err)
	}
	t.Cleanup(db.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config{SMTP: relay.Addr(), SMTPTLS: "none", NoAuth: true, DB: db}
	cfg.Hearing = hearingConfig{BounceListen: ln.Addr().String(), BounceLn: ln, BounceDomain: "bounce.example.com"}
	api, _ := startConfig(t, cfg)

	_, loc := postAsync(t, api+httpapi.SendPath, marshal(t, smallCall(2)))

	// status polls the call's status until done holds, or a minute.
	status := func(what string, done func(postroom.CallStatus) bool) postroom.CallStatus {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			var s postroom.CallStatus
			if code := getJSON(t, api+loc, &s); code != http.StatusOK {
				t.Fatalf("GET the call: %d", code)
			}
			if done(s) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s after a minute: %+v", what, s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	done := status("done call", func(s postroom.CallStatus) bool { return s.State == postroom.CallDone })
	if len(done.Results) != 2 || done.Results[0].Status != postroom.StatusSent || len(done.Later) != 0 {
		t.Fatalf("done: %+v; want 2 sent, nothing later", done)
	}
	first := done.Results[0]
	verp := postroom.VERP{Domain: "bounce.example.com"}.Address(first.SendID)
	// The DSN comes back as soon as the call is done, whether or not the
	// events' writer has written the send the outbox's worker made: it is
	// taken at its first delivery (deliverDSN fails on a 451).
	if sendRecorded(t, db, first.SendID) {
		t.Log("the send was written before its DSN came: this run does not show the wait")
	}
	start := time.Now()
	deliverDSN(t, cfg.Hearing.BounceListen, false, verp, dsn(verp, first.Email))
	t.Logf("DSN taken %v after its delivery began", time.Since(start).Round(time.Millisecond))

	later := status("later bounce", func(s postroom.CallStatus) bool { return len(s.Later) > 0 })
	if len(later.Later) != 1 || later.Later[0].Type != postroom.EventHardBounce || later.Later[0].SendID != first.SendID || later.Later[0].Status != "5.1.1" {
		t.Errorf("later %+v; want the first recipient's hard_bounce", later.Later)
	}
	if later.Results[0] != first {
		t.Errorf("result after the bounce %+v; want it as it was, %+v", later.Results[0], first)
	}
}
