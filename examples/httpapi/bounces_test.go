package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/postroomtest"
)

// dsn is an RFC 3464 delivery status notification from the relay that
// took the message to rcpt, returned to the message's envelope sender
// verp: 550 5.1.1, the mailbox does not exist.
func dsn(verp, rcpt string) string {
	return strings.ReplaceAll(fmt.Sprintf(`From: MAILER-DAEMON@relay.example.org (Mail Delivery System)
To: %[1]s
Subject: Undelivered Mail Returned to Sender
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="B1"

--B1
Content-Type: text/plain

The message could not be delivered to <%[2]s>.

--B1
Content-Type: message/delivery-status

Reporting-MTA: dns; relay.example.org

Final-Recipient: rfc822; %[2]s
Original-Recipient: rfc822;%[2]s
Action: failed
Status: 5.1.1
Remote-MTA: dns; mx.example.net
Diagnostic-Code: smtp; 550 5.1.1 <%[2]s>: Recipient address rejected: User unknown

--B1
Content-Type: text/rfc822-headers

Return-Path: <%[1]s>
From: sender@example.com
To: %[2]s
Subject: Hello

--B1--
`, verp, rcpt), "\n", "\r\n")
}

// deliverDSN hands msg to the bounce listener at addr over SMTP (or
// LMTP), with the null sender of a bounce, for rcpt.
func deliverDSN(t *testing.T, addr string, lmtp bool, rcpt, msg string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := smtp.NewClient(conn)
	if lmtp {
		c = smtp.NewClientLMTP(conn)
	}
	defer c.Close()
	step := func(what string, err error) {
		if err != nil {
			t.Fatalf("delivering the DSN to %s: %s: %v", addr, what, err)
		}
	}
	step("EHLO", c.Hello("relay.example.org"))
	step("MAIL", c.Mail("", nil))
	step("RCPT", c.Rcpt(rcpt, nil))
	w, err := c.Data()
	step("DATA", err)
	_, err = io.WriteString(w, msg)
	step("DATA", err)
	if lmtp {
		_, err = w.CloseWithLMTPResponse()
		step("end of DATA", err)
	} else {
		step("end of DATA", w.Close())
	}
	step("QUIT", c.Quit())
}

// TestBounceReceived runs the server with -bounce-listen and
// -bounce-domain, in memory and on PostgreSQL, over SMTP and LMTP: a
// message is sent with its VERP envelope sender; a DSN returned to that
// address lists the recipient as hard-bounce (rejects.list), and the next
// call rejects that recipient and sends to the other.
func TestBounceReceived(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		database, lmtp bool
	}{{"memory", false, false}, {"memory LMTP", false, true}, {"postgresql", true, false}} {
		database := tc.database
		t.Run(tc.name, func(t *testing.T) {
			relay := smtptest.NewServer(t, smtptest.Options{})
			cfg := config{SMTP: relay.Addr(), SMTPTLS: "none", NoAuth: true}
			if database {
				db := openTestDB(t, migrated.DSN(t))
				cfg.DB = db
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			cfg.Hearing = hearingConfig{BounceListen: ln.Addr().String(), BounceLn: ln, BounceLMTP: tc.lmtp, BounceDomain: "bounce.example.com"}
			api, _ := startConfig(t, cfg)

			call := smallCall(2)
			dead, alive := call.Recipients[0].Email, call.Recipients[1].Email
			r := post(t, t.Context(), api+"/api/1.0/message.send", "application/json", marshal(t, call))
			if r.Status != 200 || len(r.Results) != 2 || r.Results[0].Status != postroom.StatusSent {
				t.Fatalf("first call: %d %s", r.Status, r.Body)
			}
			// The envelope sender the message left with, as the relay got
			// it: the VERP address holding its send id.
			verp := postroom.VERP{Domain: "bounce.example.com"}.Address(r.Results[0].SendID)
			msgs := relay.Messages()
			i := slices.IndexFunc(msgs, func(m smtptest.Message) bool { return slices.Contains(m.To, dead) })
			if i < 0 || msgs[i].From != verp {
				t.Fatalf("the relay got no message to %s from %s: %+v", dead, verp, msgs)
			}
			if rejects := listRejects(t, api, ""); len(rejects) != 0 {
				t.Fatalf("listed before any bounce: %+v", rejects)
			}
			if database && sendRecorded(t, cfg.DB, r.Results[0].SendID) {
				t.Log("the send was written before its DSN came: this run does not show the wait")
			}
			// The DSN comes back at once, as from a local relay, before
			// the events' writer (every eventFlushEvery) wrote its send:
			// the receiver waits for the send and takes the DSN at its
			// first delivery (deliverDSN fails on a 451).
			start := time.Now()
			deliverDSN(t, cfg.Hearing.BounceListen, tc.lmtp, verp, dsn(verp, dead))
			t.Logf("DSN taken %v after its delivery began", time.Since(start).Round(time.Millisecond))

			rejects := listRejects(t, api, dead)
			if len(rejects) != 1 || !strings.EqualFold(rejects[0].Email, dead) || rejects[0].Reason != "hard-bounce" || rejects[0].SendID != r.Results[0].SendID {
				t.Fatalf("rejects.list after the DSN: %+v, want %s hard-bounce from send %s", rejects, dead, r.Results[0].SendID)
			}
			if rejects := listRejects(t, api, alive); len(rejects) != 0 {
				t.Fatalf("the other recipient is listed: %+v", rejects)
			}

			r = post(t, t.Context(), api+"/api/1.0/message.send", "application/json", marshal(t, call))
			if r.Status != 200 || len(r.Results) != 2 {
				t.Fatalf("second call: %d %s", r.Status, r.Body)
			}
			if res := r.Results[0]; res.Status != postroom.StatusRejected || !strings.HasPrefix(res.Reason, string(postroom.ReasonHardBounce)+":") || res.SendID != "" {
				t.Errorf("%s after the bounce: %+v, want rejected hard-bounce, not sent", dead, res)
			}
			if res := r.Results[1]; res.Status != postroom.StatusSent {
				t.Errorf("%s: %+v, want sent", alive, res)
			}
		})
	}
}

// reject is an entry of rejects.list's answer.
type reject struct {
	Email  string `json:"email"`
	Reason string `json:"reason"`
	SendID string `json:"send_id"`
	Scope  string `json:"scope"`
	List   string `json:"list"`
}

// listRejects asks rejects.list of the API at api for the entries whose
// address begins with prefix.
func listRejects(t *testing.T, api, prefix string) []reject {
	t.Helper()
	body := map[string]any{"key": "k", "account_id": "acct"}
	if prefix != "" {
		body["email"] = prefix
	}
	r := post(t, t.Context(), api+"/api/1.0/rejects.list", "application/json", marshal(t, body))
	if r.Status != 200 {
		t.Fatalf("rejects.list: %d %s", r.Status, r.Body)
	}
	var out []reject
	if err := json.Unmarshal(r.Body, &out); err != nil {
		t.Fatalf("rejects.list: %v: %s", err, r.Body)
	}
	return out
}

// sendRecorded reports whether the event log in db holds the send id
// now.
func sendRecorded(t *testing.T, db *database, id string) bool {
	t.Helper()
	log, err := events.NewSQL(db.DB, events.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, ok, err := log.Lookup(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestUnsubscribeURL runs the server with -unsubscribe-url: each message
// of a list call carries its recipient's one-click URL for the list, a
// transactional call's none; the provider's RFC 8058 POST to the server
// at that URL's path lists the recipient as unsub, a GET does not, and
// the next call of the list rejects the recipient.
func TestUnsubscribeURL(t *testing.T) {
	relay := smtptest.NewServer(t, smtptest.Options{})
	keys, err := parseUnsubscribeKeys("k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	const base = "https://mail.example.com/unsubscribe/"
	api, _ := startConfig(t, config{SMTP: relay.Addr(), SMTPTLS: "none", NoAuth: true,
		Hearing: hearingConfig{UnsubscribeURL: base, UnsubscribeKeys: keys}})

	receipt := smallCall(1)
	r := post(t, t.Context(), api+"/api/1.0/message.send", "application/json", marshal(t, receipt))
	if r.Status != http.StatusOK || len(r.Results) != 1 || r.Results[0].Status != postroom.StatusSent {
		t.Fatalf("transactional call: %d %s", r.Status, r.Body)
	}
	if msgs := relay.Messages(); len(msgs) != 1 || postroomtest.Parse(t, msgs[0].Data).Header["List-Unsubscribe"] != nil {
		t.Fatalf("the transactional message got a List-Unsubscribe (or the relay got %d messages)", len(msgs))
	}

	call := smallCall(2)
	call.Message.Headers = append(call.Message.Headers, postroom.ListID("Shop news", "news.shop.example.com"))
	gone, stays := call.Recipients[0].Email, call.Recipients[1].Email
	r = post(t, t.Context(), api+"/api/1.0/message.send", "application/json", marshal(t, call))
	if r.Status != http.StatusOK || len(r.Results) != 2 || r.Results[0].Status != postroom.StatusSent {
		t.Fatalf("first call: %d %s", r.Status, r.Body)
	}
	msgs := relay.Messages()[1:]
	i := slices.IndexFunc(msgs, func(m smtptest.Message) bool { return slices.Contains(m.To, gone) })
	if i < 0 {
		t.Fatalf("the relay got no message to %s", gone)
	}
	msg := postroomtest.Parse(t, msgs[i].Data)
	if got := msg.Header.Get("List-Unsubscribe-Post"); got != "List-Unsubscribe=One-Click" {
		t.Fatalf("List-Unsubscribe-Post %q", got)
	}
	link := strings.Trim(strings.Join(strings.Fields(msg.Header.Get("List-Unsubscribe")), ""), "<>")
	token, ok := strings.CutPrefix(link, base)
	if !ok || token == "" {
		t.Fatalf("List-Unsubscribe %q, want under %s", link, base)
	}
	// The link as this server serves it: the URL's path on its address.
	served := api + "/unsubscribe/" + token

	resp, err := http.Get(served)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
	if rejects := listRejects(t, api, ""); len(rejects) != 0 {
		t.Fatalf("listed after a GET: %+v", rejects)
	}
	resp, err = http.PostForm(served, url.Values{"List-Unsubscribe": {"One-Click"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST: %d", resp.StatusCode)
	}
	if rejects := listRejects(t, api, ""); len(rejects) != 1 || !strings.EqualFold(rejects[0].Email, gone) || rejects[0].Reason != "unsub" {
		t.Fatalf("rejects.list after the POST: %+v, want %s unsub", rejects, gone)
	}

	r = post(t, t.Context(), api+"/api/1.0/message.send", "application/json", marshal(t, call))
	if res := r.Results[0]; res.Status != postroom.StatusRejected || !strings.HasPrefix(res.Reason, string(postroom.ReasonUnsub)) {
		t.Errorf("%s after unsubscribing: %+v, want rejected unsub", gone, res)
	}
	if res := r.Results[1]; res.Status != postroom.StatusSent {
		t.Errorf("%s: %+v, want sent", stays, res)
	}
}
