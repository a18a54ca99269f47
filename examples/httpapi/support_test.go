package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/httpapi"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/internal/testkit/testenv"
	"github.com/postroom/postroom/transport"
)

// TestSupportQuestion answers "what happened to ann@example.org's mail?"
// three ways over one server on PostgreSQL, with -console, a relay and a
// bounce listener: the command postroom activity, messages.search and
// messages.info, and the console. Ann got a direct call's message (sent),
// a call sent later (Prefer: respond-async) whose first attempt the relay
// greylisted (451) and whose retry was sent, and a message that bounced
// (a DSN to the bounce listener). Each answer shows the direct message
// sent; the queued call as two messages, since each attempt of the
// outbox has a send id of its own: its first attempt deferred with the
// relay's reply, its retry sent, both headed by the queued event; and
// the bounce with its status and diagnostic.
func TestSupportQuestion(t *testing.T) {
	t.Parallel()
	const (
		ann          = "ann@example.org"
		bounceDomain = "bounce.example.com"
		greylisted   = "<ann@example.org>: greylisted, try again later"
	)
	// Ann's first RCPT is the direct call's; the next ones are the queued
	// call's first attempt (the transport's own tries of it), greylisted;
	// the outbox's retry and the last call go through.
	relay := smtptest.NewServer(t, smtptest.Options{DiscardData: true, Faults: func(c smtptest.Command) smtptest.Fault {
		if c.Stage == smtptest.Rcpt && strings.EqualFold(c.Addr, ann) && c.Attempt > 1 && c.Attempt <= 1+transport.DefaultRetryAttempts {
			return smtptest.Fault{Code: 451, Enhanced: "4.7.1", Text: greylisted}
		}
		return smtptest.Fault{}
	}})
	dsnURL := migrated.DSN(t)
	db := openTestDB(t, dsnURL)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config{SMTP: relay.Addr(), SMTPTLS: "none", Keys: writeKeys(t, map[string][]string{"acct": {"k"}}),
		DB: db, Console: true, Queue: queueConfig{Backoff: 50 * time.Millisecond}}
	cfg.Hearing = hearingConfig{BounceListen: ln.Addr().String(), BounceLn: ln, BounceDomain: bounceDomain}
	api, _ := startConfig(t, cfg)

	call := func(subject string) *postroom.Call {
		c := smallCall(1)
		c.Message.Subject = subject
		c.Recipients[0].Email = ann
		return c
	}
	// 1. A direct call, answered at once.
	r := post(t, t.Context(), api+httpapi.SendPath, "application/json", marshal(t, call("Your receipt")))
	if r.Status != http.StatusOK || len(r.Results) != 1 || r.Results[0].Status != postroom.StatusSent {
		t.Fatalf("the direct call: %d %s", r.Status, r.Body)
	}
	direct := r.Results[0].SendID

	// 2. A call sent later: greylisted, then sent on the outbox's retry.
	queued, loc := postAsync(t, api+httpapi.SendPath, marshal(t, call("Reset your password")))
	var done postroom.CallStatus
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if code := getJSON(t, api+loc, &done); code != http.StatusOK {
			t.Fatalf("GET %s: %d", loc, code)
		}
		if done.State == postroom.CallDone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queued call is not done after a minute: %+v", done)
		}
	}
	if len(done.Results) != 1 || done.Results[0].Status != postroom.StatusSent {
		t.Fatalf("the queued call: %+v; want its recipient sent", done)
	}
	retried := done.Results[0].SendID

	// 3. A message that bounces: sent, then its DSN to the bounce listener.
	r = post(t, t.Context(), api+httpapi.SendPath, "application/json", marshal(t, call("Your order shipped")))
	if r.Status != http.StatusOK || len(r.Results) != 1 || r.Results[0].Status != postroom.StatusSent {
		t.Fatalf("the call that bounces: %d %s", r.Status, r.Body)
	}
	bounced := r.Results[0].SendID
	verp := postroom.VERP{Domain: bounceDomain}.Address(bounced)
	deliverDSN(t, cfg.Hearing.BounceListen, false, verp, dsn(verp, ann))

	// The events reach the database every eventFlushEvery: ask
	// messages.search until the bounce is there.
	var found []apiMessage
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		found = searchMessages(t, api, map[string]any{"email": ann})
		if i := slices.IndexFunc(found, func(m apiMessage) bool { return m.ID == bounced }); i >= 0 && found[i].State == string(events.StateBounced) && len(found) >= 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("messages.search has not Ann's four messages with the bounce after a minute: %+v", found)
		}
	}
	story := supportStory{direct: direct, callID: queued.ID, retried: retried, bounced: bounced, greylisted: greylisted}

	// (b) The API: messages.search, then messages.info of the bounce.
	var msgs []events.Message
	for _, m := range found {
		msgs = append(msgs, m.message())
	}
	deferred := story.check(t, "messages.search", msgs)
	var info apiMessage
	postJSON(t, api+httpapi.MessagesInfoPath, map[string]any{"key": "k", "account_id": "acct", "id": bounced}, &info)
	if info.ID != bounced || info.Email != ann || info.Subject != "Your order shipped" {
		t.Errorf("messages.info of %s: %+v", bounced, info)
	}
	story.checkBounce(t, "messages.info", info.message())
	if len(info.SMTPEvents) != 1 || info.SMTPEvents[0].Type != "sent" {
		t.Errorf("messages.info's smtp_events %+v; want the one send", info.SMTPEvents)
	}
	var infoDeferred apiMessage
	postJSON(t, api+httpapi.MessagesInfoPath, map[string]any{"key": "k", "account_id": "acct", "id": deferred}, &infoDeferred)
	if len(infoDeferred.SMTPEvents) != 1 || infoDeferred.SMTPEvents[0].Type != "deferred" || !strings.Contains(infoDeferred.SMTPEvents[0].Diag, "greylisted") {
		t.Errorf("messages.info's smtp_events of the deferred attempt %+v; want one deferral with the relay's reply", infoDeferred.SMTPEvents)
	}

	// (a) The command: postroom activity, as JSON and as text.
	bin := buildPostroom(t)
	out := runPostroom(t, bin, "activity", "-account", "acct", "-database-url", dsnURL, "-json", ann)
	var listing struct {
		Messages []events.Message `json:"messages"`
	}
	if err := json.Unmarshal(out, &listing); err != nil {
		t.Fatalf("postroom activity -json: %v\n%s", err, out)
	}
	story.check(t, "postroom activity -json", listing.Messages)
	text := string(runPostroom(t, bin, "activity", "-account", "acct", "-database-url", dsnURL, ann))
	for _, want := range []string{direct, retried, deferred, bounced, "deferral", "greylisted", "hard_bounce", "5.1.1", "User unknown", "call " + queued.ID, "subject Your order shipped"} {
		if !strings.Contains(text, want) {
			t.Errorf("postroom activity lacks %q:\n%s", want, text)
		}
	}

	// (c) The console, as the account with its key.
	res, body := getConsole(t, api, "messages?q="+url.QueryEscape(ann), "acct", "k")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("the console's search: %d\n%s", res.StatusCode, body)
	}
	for _, want := range []string{">" + direct + "<", ">" + retried + "<", ">" + deferred + "<", ">" + bounced + "<", "badge-sent", "badge-deferred", "badge-bounced", "greylisted", "User unknown"} {
		if !strings.Contains(body, want) {
			t.Errorf("the console's search lacks %q:\n%s", want, body)
		}
	}
	_, body = getConsole(t, api, "messages?"+url.Values{"q": {ann}, "state": {"bounced"}}.Encode(), "acct", "k")
	if !strings.Contains(body, bounced) || strings.Contains(body, direct) || strings.Contains(body, retried) {
		t.Errorf("the console's search of Ann's bounced messages:\n%s", body)
	}
	res, body = getConsole(t, api, "message?id="+bounced, "acct", "k")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("the console's page of %s: %d\n%s", bounced, res.StatusCode, body)
	}
	i, j := strings.Index(body, "event-send"), strings.Index(body, "event-hard_bounce")
	if i < 0 || j < i {
		t.Errorf("the bounced message's timeline is not send then hard_bounce:\n%s", body)
	}
	for _, want := range []string{`id="state">bounced`, "5.1.1", "User unknown", "Your order shipped"} {
		if !strings.Contains(body, want) {
			t.Errorf("the bounced message's page lacks %q:\n%s", want, body)
		}
	}
	_, body = getConsole(t, api, "message?id="+deferred, "acct", "k")
	i, j = strings.Index(body, "event-queued"), strings.Index(body, "event-deferral")
	if i < 0 || j < i || !strings.Contains(body, "greylisted") || !strings.Contains(body, `id="state">deferred`) || !strings.Contains(body, `id="call-id">`+queued.ID) {
		t.Errorf("the deferred attempt's page lacks its call %s, or its timeline is not queued then deferral with the relay's reply:\n%s", queued.ID, body)
	}
}

// supportStory is what TestSupportQuestion's answers must tell: the
// send ids of the direct call's message, the queued call's retry and the
// bounced message, the queued call's id, and the relay's greylisting
// text.
type supportStory struct {
	direct, callID, retried, bounced, greylisted string
}

// check asserts that msgs, one answer's messages to Ann, are the story's
// four, each in its state with its timeline, and returns the send id of
// the queued call's deferred attempt.
func (s supportStory) check(t *testing.T, source string, msgs []events.Message) (deferred string) {
	t.Helper()
	if len(msgs) != 4 {
		t.Errorf("%s: %d messages, want 4: %+v", source, len(msgs), msgs)
	}
	byID := map[string]events.Message{}
	for _, m := range msgs {
		if m.Email != "ann@example.org" {
			t.Errorf("%s: a message to %s", source, m.Email)
		}
		if m.CallID == s.callID && m.SendID != s.retried {
			deferred = m.SendID
		}
		byID[m.SendID] = m
	}
	if m := byID[s.direct]; m.State != events.StateSent || types(m.Timeline) != "send" || m.Subject != "Your receipt" {
		t.Errorf("%s: the direct call's message %+v; want sent, a send alone", source, m)
	}
	if m := byID[s.retried]; m.State != events.StateSent || m.CallID != s.callID || types(m.Timeline) != "queued send" || m.Subject != "Reset your password" {
		t.Errorf("%s: the queued call's retry %+v; want sent, queued then send, of call %s", source, m, s.callID)
	}
	m, ok := byID[deferred]
	if !ok || deferred == "" || m.State != events.StateDeferred || types(m.Timeline) != "queued deferral" {
		t.Errorf("%s: the queued call's first attempt %+v; want deferred, queued then deferral", source, m)
	} else if d := m.Timeline[1]; !strings.Contains(d.Diagnostic, s.greylisted) || !strings.Contains(d.Diagnostic+" "+d.Status, "4.7.1") {
		t.Errorf("%s: the deferral %+v; want the relay's 451 4.7.1 reply", source, d)
	}
	s.checkBounce(t, source, byID[s.bounced])
	return deferred
}

// checkBounce asserts that m is the story's bounced message: sent, then
// a hard bounce with the DSN's status and diagnostic.
func (s supportStory) checkBounce(t *testing.T, source string, m events.Message) {
	t.Helper()
	if m.SendID != s.bounced || m.State != events.StateBounced || types(m.Timeline) != "send hard_bounce" {
		t.Errorf("%s: the bounced message %+v; want bounced, send then hard_bounce", source, m)
		return
	}
	if b := m.Timeline[1]; b.Status != "5.1.1" || !strings.Contains(b.Diagnostic, "User unknown") {
		t.Errorf("%s: the bounce %+v; want 5.1.1 with the DSN's diagnostic", source, b)
	}
}

// types are the types of timeline's events, space-separated.
func types(timeline []postroom.Event) string {
	var s []string
	for _, e := range timeline {
		s = append(s, string(e.Type))
	}
	return strings.Join(s, " ")
}

// apiMessage is a message in messages.search's and messages.info's
// answers.
type apiMessage struct {
	ID         string           `json:"_id"`
	State      string           `json:"state"`
	Email      string           `json:"email"`
	Subject    string           `json:"subject"`
	CallID     string           `json:"call_id"`
	Timeline   []postroom.Event `json:"timeline"`
	SMTPEvents []struct {
		Type string `json:"type"`
		Diag string `json:"diag"`
	} `json:"smtp_events"`
}

// message is m as events.Message, with the fields the story checks.
func (m apiMessage) message() events.Message {
	return events.Message{SendID: m.ID, State: events.State(m.State), Email: m.Email, Subject: m.Subject, CallID: m.CallID, Timeline: m.Timeline}
}

// searchMessages asks messages.search of account acct with the
// criteria q.
func searchMessages(t *testing.T, api string, q map[string]any) []apiMessage {
	t.Helper()
	q["key"], q["account_id"] = "k", "acct"
	var out []apiMessage
	postJSON(t, api+httpapi.MessagesSearchPath, q, &out)
	return out
}

// postJSON posts body as JSON to url, fails t unless the answer is 200,
// and decodes it into v.
func postJSON(t *testing.T, url string, body, v any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(marshal(t, body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s", url, res.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("POST %s: %v: %s", url, err, b)
	}
}

// buildPostroom builds the command postroom into a temporary folder and
// returns its path.
func buildPostroom(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		testenv.Missing(t, "the go command is not on PATH (needed to build cmd/postroom)", "install Go from https://go.dev/dl/")
	}
	bin := filepath.Join(t.TempDir(), "postroom")
	cmd := exec.CommandContext(t.Context(), gobin, "build", "-o", bin, "github.com/postroom/postroom/cmd/postroom")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/postroom: %v\n%s", err, out)
	}
	return bin
}

// runPostroom runs the command bin with args and returns its standard
// output; it fails t unless the command succeeds.
func runPostroom(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("postroom %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return stdout.Bytes()
}
