package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/postroom/postroom"
)

// disconnect runs a call of 4 recipients whose client goes away while the
// third is in the transport, the first two accepted. before is called
// when the third reached the transport, before the client goes away, with
// the log so far; disconnect returns the log once the request's record is
// in it, the transport and the call.
func disconnect(t *testing.T, ho Options, before func([]map[string]string)) ([]map[string]string, *halfTransport, *postroom.Call) {
	t.Helper()
	tr := &halfTransport{accept: 2, sent: map[string]string{}, started: make(chan struct{}, 1), ended: make(chan error, 1)}
	url, log := startHandler(t, tr, postroom.Options{Concurrency: 1}, ho)
	call := smallCall(4)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errc := make(chan error, 1)
	body := marshal(t, call)
	go func() {
		_, err := tryDo(ctx, http.MethodPost, url+"/api/1.0/message.send", "application/json", body)
		errc <- err
	}()
	select {
	case <-tr.started:
	case err := <-errc:
		t.Fatalf("the call ended before reaching the transport: %v", err)
	}
	before(log.WaitFor(t, "anything", func([]map[string]string) bool { return true }))
	cancel()
	if err := <-tr.ended; !errors.Is(err, context.Canceled) {
		t.Errorf("the transport's ctx ended with %v; want context.Canceled", err)
	}
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("client: %v; want context.Canceled", err)
	}
	// The handler logs the request once the Mailer has returned.
	records := log.WaitFor(t, "the abandoned request", func(rs []map[string]string) bool {
		return slices.ContainsFunc(rs, func(r map[string]string) bool { return r["msg"] == "request" })
	})
	request := byMsg(records, "request")[0]
	if !strings.Contains(request["error"], "client went away") || request["level"] != "WARN" {
		t.Errorf("request record %v: want a warning that the client went away", request)
	}
	if len(tr.sent) != tr.accept {
		t.Errorf("the transport accepted %d messages; want %d", len(tr.sent), tr.accept)
	}
	return records, tr, call
}

// checkResultRecords checks that results holds one record per recipient of
// call, tied to the request, each agreeing with the transport's ledger: a
// recipient is logged sent, with its send id, exactly when the transport
// accepted its message, and deferred otherwise. withEmail says whether a
// record names its recipient's address too (or must not).
func checkResultRecords(t *testing.T, results []map[string]string, requestID string, call *postroom.Call, tr *halfTransport, withEmail bool) {
	t.Helper()
	if len(results) != len(call.Recipients) {
		t.Fatalf("%d result records for %d recipients: %v", len(results), len(call.Recipients), results)
	}
	slices.SortFunc(results, func(a, b map[string]string) int {
		i, _ := strconv.Atoi(a["index"])
		j, _ := strconv.Atoi(b["index"])
		return i - j
	})
	for i, r := range results {
		email := call.Recipients[i].Email
		wantEmail := ""
		if withEmail {
			wantEmail = email
		}
		if r["index"] != strconv.Itoa(i) || r["email"] != wantEmail || r["request_id"] != requestID || requestID == "" {
			t.Errorf("result record %d = %v; want index %d, %s, request id %q", i, r, i, email, requestID)
			continue
		}
		if id, sent := tr.sent[email]; sent {
			if r["status"] != string(postroom.StatusSent) || r["send_id"] != id {
				t.Errorf("%s was accepted as %s; logged %v", email, id, r)
			}
		} else if r["status"] != string(postroom.StatusDeferred) {
			t.Errorf("%s was never accepted; logged %v, want deferred", email, r)
		}
	}
}

// TestClientDisconnect: each recipient's result is logged as soon as it
// is final, while the call still runs, so that a client that goes away
// (or a server that dies) mid-call leaves the sent set in the log. When
// the client goes away, the recipients left are deferred and logged so;
// nothing is logged twice.
func TestClientDisconnect(t *testing.T) {
	records, tr, call := disconnect(t, Options{}, func(soFar []map[string]string) {
		// The call is held in the transport at its third recipient: the
		// two sent ones are in the log already, and the request is not.
		sent := byMsg(soFar, "result")
		if len(sent) != 2 || sent[0]["status"] != string(postroom.StatusSent) || sent[1]["status"] != string(postroom.StatusSent) || sent[0]["level"] != "INFO" {
			t.Errorf("while the call runs, the log has result records %v; want the two sent, at INFO", sent)
		}
		if len(byMsg(soFar, "request")) != 0 {
			t.Error("the request was logged before its call ended")
		}
	})
	request := byMsg(records, "request")[0]
	checkResultRecords(t, byMsg(records, "result"), request["request_id"], call, tr, false)
	if n := len(byMsg(records, "result not delivered to the client")); n != 0 {
		t.Errorf("%d results logged again at the end", n)
	}
}

// TestClientDisconnectResultsNotLogged: when the results are not logged
// as they complete (ResultLog.Off, or a level the log drops), a call
// whose client went away has them logged at its end instead.
func TestClientDisconnectResultsNotLogged(t *testing.T) {
	for _, rl := range []ResultLog{{Off: true}, {Level: slog.LevelDebug}} {
		t.Run(rl.String(), func(t *testing.T) {
			records, tr, call := disconnect(t, Options{ResultLog: rl}, func(soFar []map[string]string) {
				if n := len(byMsg(soFar, "result")); n != 0 {
					t.Errorf("%d result records while the call runs; want none", n)
				}
			})
			request := byMsg(records, "request")[0]
			late := byMsg(records, "result not delivered to the client")
			for _, r := range late {
				if r["level"] != "WARN" {
					t.Errorf("record %v; want WARN", r)
				}
			}
			checkResultRecords(t, late, request["request_id"], call, tr, true)
		})
	}
}

// TestResultsLogged: a call that completes has each recipient's result
// logged once, at the chosen level, agreeing with the answer, and no
// recipient's address in the log.
func TestResultsLogged(t *testing.T) {
	discard := postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { return nil })
	url, log := startHandler(t, discard, postroom.Options{}, Options{ResultLog: ResultLog{Level: slog.LevelWarn}})
	r := post(t, t.Context(), url+"/api/1.0/message.send", "application/json", marshal(t, smallCall(5)))
	if r.Status != http.StatusOK || len(r.Results) != 5 {
		t.Fatalf("got %d %s; want 200 with 5 results", r.Status, r.Body)
	}
	records := log.WaitFor(t, "the request", func(rs []map[string]string) bool { return len(byMsg(rs, "request")) == 1 })
	id := byMsg(records, "request")[0]["request_id"]
	logged := map[string]bool{}
	for _, rec := range byMsg(records, "result") {
		i, err := strconv.Atoi(rec["index"])
		if err != nil || i < 0 || i >= 5 || logged[rec["index"]] {
			t.Errorf("record %v: bad or repeated index", rec)
			continue
		}
		logged[rec["index"]] = true
		want := r.Results[i]
		if rec["level"] != "WARN" || rec["request_id"] != id || rec["status"] != string(want.Status) || rec["send_id"] != want.SendID || want.SendID == "" {
			t.Errorf("record %v; want WARN, request %s, %+v", rec, id, want)
		}
	}
	if len(logged) != 5 {
		t.Errorf("%d recipients logged, want 5", len(logged))
	}
	for _, res := range r.Results {
		if strings.Contains(log.String(), res.Email) {
			t.Errorf("the log holds %s", res.Email)
		}
	}
}

func TestResultLogText(t *testing.T) {
	for _, tc := range []struct {
		text string
		want ResultLog
		ok   bool
	}{
		{"info", ResultLog{}, true},
		{"debug", ResultLog{Level: slog.LevelDebug}, true},
		{"WARN", ResultLog{Level: slog.LevelWarn}, true},
		{"off", ResultLog{Off: true}, true},
		{"loud", ResultLog{}, false},
	} {
		var got ResultLog
		err := got.UnmarshalText([]byte(tc.text))
		switch {
		case !tc.ok && err == nil:
			t.Errorf("%q accepted: %+v", tc.text, got)
		case tc.ok && (err != nil || got != tc.want):
			t.Errorf("%q: %+v, %v; want %+v", tc.text, got, err, tc.want)
		case tc.ok:
			if text, _ := got.MarshalText(); !strings.EqualFold(string(text), tc.text) {
				t.Errorf("%q: MarshalText gives %q", tc.text, text)
			}
		}
	}
}
