package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/smtp"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/postfixtest"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/postroomtest"
)

// TestListsThroughPostfix is the end to end run of list mail and
// transactional mail apart, through the HTTP API, a real Postfix with its
// stock retry times as the relay, and PostgreSQL: a newsletter (List-Id)
// and a receipt go to the same people; ann clicks one-click unsubscribe
// in the newsletter; bob's mailbox provider sends a complaint (ARF) about
// it; dead's receipt bounces 5.1.1 at the destination and Postfix returns
// a DSN. Then the next newsletter, the next receipt and a newsletter of
// another list: ann and bob get their receipts and not the newsletter,
// the other list still reaches ann (bob complained about list mail: no
// list mail), dead gets nothing, and cy, who did nothing, gets all.
//
// Postfix keeps its stock retry times (a DSN answered 451 would wait
// minutes for its next try) and its queue is never flushed by the test:
// dead is listed within seconds of its DSN because the receiver takes it
// at its first delivery, and Postfix's log shows no deferred delivery to
// the bounce domain.
func TestListsThroughPostfix(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a Postfix of its own")
	}
	t.Parallel()
	const (
		ann, bob, cy, dead = "ann@example.net", "bob@example.net", "cy@example.net", "dead@example.net"
		bounceDomain       = "bounce.example.com"
		unsubBase          = "https://mail.example.com/unsubscribe/"
	)
	postfixtest.Need(t)
	dest := smtptest.NewServer(t, smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Rcpt, Addr: dead},
		smtptest.Fault{Code: 550, Enhanced: "5.1.1", Text: "<" + dead + ">: Recipient address rejected: User unknown"})})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pf := postfixtest.Start(t, postfixtest.Options{StockRetry: true, Transports: map[string]string{
		bounceDomain:  "smtp:[127.0.0.1]:" + port(t, ln.Addr().String()),
		"example.net": "smtp:[127.0.0.1]:" + port(t, dest.Addr()),
	}})

	db, err := openDatabase(t.Context(), migrated.DSN(t))
	if err != nil {
		t.Fatalf("openDatabase: %v", err)
	}
	t.Cleanup(db.Close)
	keys, err := parseUnsubscribeKeys("k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	api, _ := startConfig(t, config{SMTP: pf.Addr, SMTPTLS: "none", NoAuth: true, DB: db,
		Hearing: hearingConfig{BounceListen: ln.Addr().String(), BounceLn: ln, BounceDomain: bounceDomain,
			UnsubscribeURL: unsubBase, UnsubscribeKeys: keys}})

	news := postroom.ListID("Shop news", "news.shop.example.com")
	deals := postroom.ListID("Shop deals", "deals.shop.example.com")
	call := func(list *postroom.Header, to ...string) *postroom.Call {
		c := smallCall(len(to))
		for i, a := range to {
			c.Recipients[i].Email = a
		}
		if list != nil {
			c.Message.Headers = []postroom.Header{*list}
		}
		return c
	}
	send := func(what string, c *postroom.Call) map[string]postroom.Result {
		t.Helper()
		r := post(t, t.Context(), api+"/api/1.0/message.send", "application/json", marshal(t, c))
		if r.Status != http.StatusOK || len(r.Results) != len(c.Recipients) {
			t.Fatalf("%s: %d %s", what, r.Status, r.Body)
		}
		out := make(map[string]postroom.Result)
		for _, res := range r.Results {
			out[res.Email] = res
		}
		return out
	}
	// delivered waits until the destination has a message to each of to
	// with the subject's marker, and returns them by recipient.
	delivered := func(what, marker string, to ...string) map[string]smtptest.Message {
		t.Helper()
		got := make(map[string]smtptest.Message)
		ok := pf.WaitFor(t.Context(), 60*time.Second, true, func() bool {
			for _, m := range dest.Messages() {
				if bytes.Contains(m.Data, []byte(marker)) {
					for _, a := range m.To {
						got[a] = m
					}
				}
			}
			return len(got) >= len(to)
		})
		if !ok {
			t.Fatalf("%s: the destination got messages for %v, want %v", what, slices.Collect(maps.Keys(got)), to)
		}
		return got
	}

	// Round one: a newsletter to ann, bob and cy; a receipt to them and
	// dead.
	c := call(&news, ann, bob, cy)
	c.Message.Subject = "News 1"
	first := send("newsletter", c)
	c = call(nil, ann, bob, cy, dead)
	c.Message.Subject = "Receipt 1"
	receipt := send("receipt", c)
	for _, res := range append(slices.Collect(maps.Values(first)), slices.Collect(maps.Values(receipt))...) {
		if res.Status != postroom.StatusSent {
			t.Fatalf("round one: %s %s %q, want sent (Postfix takes every message)", res.Email, res.Status, res.Reason)
		}
	}
	newsMsgs := delivered("newsletter", "News 1", ann, bob, cy)
	receiptMsgs := delivered("receipt", "Receipt 1", ann, bob, cy)
	for a, m := range receiptMsgs {
		if h := postroomtest.Parse(t, m.Data).Header; h.Get("List-Unsubscribe") != "" || h.Get("List-Id") != "" {
			t.Errorf("%s's receipt carries List-Id %q, List-Unsubscribe %q", a, h.Get("List-Id"), h.Get("List-Unsubscribe"))
		}
	}

	// dead's DSN: Postfix got 550 at RCPT and returns it to the receipt's
	// VERP address at once. No flush: a 451 would wait minutes.
	bounced := time.Now()
	if !pf.WaitFor(t.Context(), 30*time.Second, false, func() bool {
		return hasReject(listRejects(t, api, dead), dead, "hard-bounce")
	}) {
		t.Fatalf("dead is not listed 30 s after its bounce (rejects %+v)\nPostfix's log:\n%s", listRejects(t, api, dead), pf.Maillog())
	}
	t.Logf("dead listed %v after its receipt was sent", time.Since(bounced).Round(time.Millisecond))
	for line := range strings.Lines(pf.Maillog()) {
		if strings.Contains(line, "@"+bounceDomain) && strings.Contains(line, "status=deferred") {
			t.Errorf("a delivery to the bounce domain was deferred: %s", line)
		}
	}

	// ann: one-click unsubscribe, as a mailbox provider POSTs it.
	h := postroomtest.Parse(t, newsMsgs[ann].Data).Header
	if got := h.Get("List-Unsubscribe-Post"); got != "List-Unsubscribe=One-Click" {
		t.Fatalf("ann's newsletter: List-Unsubscribe-Post %q", got)
	}
	link := strings.Trim(strings.Join(strings.Fields(h.Get("List-Unsubscribe")), ""), "<>")
	token, ok := strings.CutPrefix(link, unsubBase)
	if !ok {
		t.Fatalf("ann's newsletter: List-Unsubscribe %q, want under %s", link, unsubBase)
	}
	resp, err := http.PostForm(api+"/unsubscribe/"+token, url.Values{"List-Unsubscribe": {"One-Click"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("one-click POST: %d", resp.StatusCode)
	}

	// bob: a complaint about the newsletter, from his provider's feedback
	// loop to the newsletter's envelope sender, through Postfix.
	verp := postroom.VERP{Domain: bounceDomain}.Address(first[bob].SendID)
	if newsMsgs[bob].From != verp {
		t.Fatalf("bob's newsletter left from %q, want %q", newsMsgs[bob].From, verp)
	}
	if err := smtp.SendMail(pf.Addr, nil, "feedback@fbl.example.net", []string{verp}, complaint(verp, bob, newsMsgs[bob].Data)); err != nil {
		t.Fatalf("submitting the complaint to Postfix: %v", err)
	}
	if !pf.WaitFor(t.Context(), 30*time.Second, false, func() bool {
		return hasReject(listRejects(t, api, bob), bob, "spam")
	}) {
		t.Fatalf("bob is not listed 30 s after his complaint (rejects %+v)\nPostfix's log:\n%s", listRejects(t, api, bob), pf.Maillog())
	}
	for _, tc := range []struct{ addr, reason, scope, list string }{
		{ann, "unsub", "list", "news.shop.example.com"},
		{bob, "spam", "lists", ""},
		{dead, "hard-bounce", "all", ""},
	} {
		rs := listRejects(t, api, tc.addr)
		if len(rs) != 1 || rs[0].Reason != tc.reason || rs[0].Scope != tc.scope || rs[0].List != tc.list {
			t.Errorf("rejects.list %s: %+v, want one %s entry of scope %s %s", tc.addr, rs, tc.reason, tc.scope, tc.list)
		}
	}
	if rs := listRejects(t, api, cy); len(rs) != 0 {
		t.Errorf("cy is listed: %+v", rs)
	}

	// Round two.
	everyone := []string{ann, bob, cy, dead}
	c = call(&news, everyone...)
	c.Message.Subject = "News 2"
	news2 := send("second newsletter", c)
	c = call(nil, everyone...)
	c.Message.Subject = "Receipt 2"
	receipt2 := send("second receipt", c)
	c = call(&deals, everyone...)
	c.Message.Subject = "Deals 1"
	deals1 := send("deals", c)
	for _, tc := range []struct {
		what    string
		results map[string]postroom.Result
		want    map[string]postroom.ReasonCode // "" sent, else rejected with it
	}{
		{"second newsletter", news2, map[string]postroom.ReasonCode{ann: postroom.ReasonUnsub, bob: postroom.ReasonSpam, cy: "", dead: postroom.ReasonHardBounce}},
		{"second receipt", receipt2, map[string]postroom.ReasonCode{ann: "", bob: "", cy: "", dead: postroom.ReasonHardBounce}},
		{"deals", deals1, map[string]postroom.ReasonCode{ann: "", bob: postroom.ReasonSpam, cy: "", dead: postroom.ReasonHardBounce}},
	} {
		for a, code := range tc.want {
			res := tc.results[a]
			switch {
			case code == "" && res.Status != postroom.StatusSent:
				t.Errorf("%s to %s: %s %q, want sent", tc.what, a, res.Status, res.Reason)
			case code != "" && (res.Status != postroom.StatusRejected || !strings.HasPrefix(res.Reason, string(code)+":") || res.SendID != ""):
				t.Errorf("%s to %s: %s %q, want rejected %s and no message", tc.what, a, res.Status, res.Reason, code)
			}
		}
	}
	delivered("second newsletter", "News 2", cy)
	delivered("second receipt", "Receipt 2", ann, bob, cy)
	delivered("deals", "Deals 1", ann, cy)
	for _, m := range dest.Messages() {
		for _, a := range m.To {
			if a == dead && !bytes.Contains(m.Data, []byte("Receipt 1")) {
				t.Errorf("dead got a message after its bounce")
			}
			if (a == ann || a == bob) && bytes.Contains(m.Data, []byte("News 2")) || a == bob && bytes.Contains(m.Data, []byte("Deals 1")) {
				t.Errorf("%s got list mail it is suppressed from", a)
			}
		}
	}
}

// port is the port of the host:port addr.
func port(t *testing.T, addr string) string {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// hasReject reports whether rs lists addr with reason.
func hasReject(rs []reject, addr, reason string) bool {
	return slices.ContainsFunc(rs, func(r reject) bool { return strings.EqualFold(r.Email, addr) && r.Reason == reason })
}

// complaint is a feedback report (RFC 5965) from a mailbox provider about
// original, the message sent to complainer, addressed to rcpt.
func complaint(rcpt, complainer string, original []byte) []byte {
	return []byte(strings.ReplaceAll(fmt.Sprintf(`From: feedback@fbl.example.net
To: %[1]s
Subject: Complaint about message from example.com
MIME-Version: 1.0
Content-Type: multipart/report; report-type=feedback-report; boundary="FB"

--FB
Content-Type: text/plain

This is an email abuse report for an email message received from IP
127.0.0.1.

--FB
Content-Type: message/feedback-report

Feedback-Type: abuse
User-Agent: fbl.example.net/1.0
Version: 1
Original-Mail-From: <%[1]s>
Original-Rcpt-To: <%[2]s>
Arrival-Date: Mon, 7 Dec 2026 10:00:00 +0000

--FB
Content-Type: message/rfc822

%[3]s
--FB--
`, rcpt, complainer, strings.ReplaceAll(string(original), "\r\n", "\n")), "\n", "\r\n"))
}
