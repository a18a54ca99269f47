package postroom_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/transport"
)

// TestResultTyped checks that a Go caller branches on Status, Code and Err
// without reading Reason, and that the JSON shape is the spec's.
func TestResultTyped(t *testing.T) {
	perm := &postroom.DeliveryError{Kind: postroom.DeliveryPermanent, Code: 550, Enhanced: "5.1.1", Text: "no such user"}
	temp := &postroom.DeliveryError{Code: 451, Enhanced: "4.3.0", Text: "try later"}
	lost := &postroom.DeliveryError{Kind: postroom.DeliveryUncertain, Err: errors.New("EOF")}
	partial := &postroom.PartialError{Refused: []postroom.RefusedRecipient{{Address: "audit@example.com", Err: perm}}}
	errFor := map[string]error{
		"perm@example.com":    fmt.Errorf("relay: %w", perm),
		"temp@example.com":    temp,
		"lost@example.com":    lost,
		"partial@example.com": partial,
		"ctx@example.com":     fmt.Errorf("dial: %w", context.Canceled),
	}
	tests := []struct {
		email  string
		status postroom.Status
		code   postroom.ReasonCode
		err    error // Result.Err must be (or wrap) this
	}{
		{"ok@example.com", postroom.StatusSent, "", nil},
		{"perm@example.com", postroom.StatusRejected, postroom.ReasonHardBounce, perm},
		{"temp@example.com", postroom.StatusDeferred, postroom.ReasonSoftBounce, temp},
		{"lost@example.com", postroom.StatusUnknown, postroom.ReasonConnectionLost, lost},
		{"partial@example.com", postroom.StatusSent, postroom.ReasonBCCRejected, partial},
		{"ctx@example.com", postroom.StatusDeferred, postroom.ReasonCanceled, context.Canceled},
		{"bad@", postroom.StatusInvalid, postroom.ReasonInvalidEmail, nil},
	}
	var emails []string
	for _, tt := range tests {
		emails = append(emails, tt.email)
	}
	call := smallCall(emails...)
	call.Message.BCC = "audit@example.com"
	m := newMailer(t, postroom.TransportFunc(func(_ context.Context, env *postroom.Envelope) error { return errFor[env.To[0]] }), postroom.Options{})
	results, err := m.Send(t.Context(), call)
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		r := results[i]
		if r.Email != tt.email || r.Status != tt.status || r.Code != tt.code {
			t.Errorf("%s: %s %q (code %q), want %s %s", tt.email, r.Status, r.Reason, r.Code, tt.status, tt.code)
		}
		if code, _, _ := strings.Cut(r.Reason, ": "); code != string(r.Code) {
			t.Errorf("%s: Reason %q does not start with Code %q", tt.email, r.Reason, r.Code)
		}
		if (tt.err == nil) != (r.Err == nil) || tt.err != nil && !errors.Is(r.Err, tt.err) {
			t.Errorf("%s: Err %v, want %v", tt.email, r.Err, tt.err)
		}
	}
	var de *postroom.DeliveryError
	if !errors.As(results[1].Err, &de) || de.Code != 550 || de.Enhanced != "5.1.1" {
		t.Errorf("hard bounce: Err %v does not lead to its 550 5.1.1 DeliveryError", results[1].Err)
	}

	// The JSON shape is exactly the spec's.
	data, err := json.Marshal(results[1])
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"email": "perm@example.com", "status": "rejected", "reason": "hard-bounce: 550 5.1.1 no such user", "send_id": results[1].SendID}
	if len(fields) != len(want) {
		t.Fatalf("JSON %s, want the keys email, status, reason, send_id", data)
	}
	for k, v := range want {
		if fields[k] != v {
			t.Errorf("JSON %s: %s = %v, want %v", data, k, fields[k], v)
		}
	}
}

// logRecorder is a Logger writing JSON records to a buffer, and the buffer.
func logRecorder() (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), &buf
}

// TestReasonKeepsInternalTextOut checks that a reason carries the next
// hop's reply and never the transport's own error text, which goes to
// Options.Logger instead.
func TestReasonKeepsInternalTextOut(t *testing.T) {
	pathErr := fmt.Errorf("transport: Dir: %w", &fs.PathError{Op: "open", Path: "/srv/spool/tmp", Err: fs.ErrPermission})
	errFor := map[string]error{
		"path@example.com":      pathErr,
		"net@example.com":       &postroom.DeliveryError{Err: errors.New("dial tcp 10.1.2.3:25: connection refused")},
		"uncertain@example.com": &postroom.DeliveryError{Kind: postroom.DeliveryUncertain, Err: errors.New("read tcp 10.1.2.3:25: connection reset by peer")},
		"reply@example.com":     &postroom.DeliveryError{Code: 421, Enhanced: "4.7.0", Text: "too many\r\nconnections\x00"},
	}
	want := map[string]string{
		"path@example.com":      "connection-failed",
		"net@example.com":       "connection-failed",
		"uncertain@example.com": "connection-lost-after-data",
		"reply@example.com":     "soft-bounce: 421 4.7.0 too many connections",
	}
	var emails []string
	for e := range want {
		emails = append(emails, e)
	}
	slices.Sort(emails)
	call := smallCall(emails...)
	log, buf := logRecorder()
	m := newMailer(t, postroom.TransportFunc(func(_ context.Context, env *postroom.Envelope) error { return errFor[env.To[0]] }), postroom.Options{Logger: log})
	results, err := m.Send(t.Context(), call)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Reason != want[r.Email] {
			t.Errorf("%s: reason %q, want %q", r.Email, r.Reason, want[r.Email])
		}
	}
	if !errors.Is(results[slices.Index(emails, "path@example.com")].Err, fs.ErrPermission) {
		t.Errorf("Result.Err does not hold the transport's error")
	}
	for _, s := range []string{"/srv/spool/tmp", "10.1.2.3:25: connection refused", "connection reset by peer"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("the log does not hold %q:\n%s", s, buf)
		}
	}
}

// TestTransportUnusableReason checks that the recipients not attempted
// after ErrTransportUnusable carry the refusal's reply, not error text.
func TestTransportUnusableReason(t *testing.T) {
	tr := postroom.TransportFunc(func(context.Context, *postroom.Envelope) error {
		return &postroom.DeliveryError{Code: 535, Enhanced: "5.7.8", Text: "bad credentials", Err: fmt.Errorf("auth at /etc/postroom/secret: %w", postroom.ErrTransportUnusable)}
	})
	call := smallCall("a@example.com", "b@example.com", "c@example.com")
	results, err := newMailer(t, tr, postroom.Options{Concurrency: 1}).Send(t.Context(), call)
	if !errors.Is(err, postroom.ErrTransportUnusable) {
		t.Fatalf("err %v, want ErrTransportUnusable", err)
	}
	want := []string{"transport-unusable: 535 5.7.8 bad credentials", "transport-unusable: not attempted: 535 5.7.8 bad credentials", "transport-unusable: not attempted: 535 5.7.8 bad credentials"}
	for i, r := range results {
		if r.Status != postroom.StatusDeferred || r.Code != postroom.ReasonTransportUnusable || r.Reason != want[i] || !errors.Is(r.Err, postroom.ErrTransportUnusable) {
			t.Errorf("result %d = %+v, want deferred %q", i, r, want[i])
		}
	}
}

// TestRenderErrorReason checks that a render failure's reason names the
// part and the limit, not the template engine's error text.
func TestRenderErrorReason(t *testing.T) {
	call := smallCall("a@example.com")
	call.Message.HTML = "{{#each items}}{{this}}{{/each}}"
	items := make([]any, 2000)
	for i := range items {
		items[i] = strings.Repeat("x", 100)
	}
	call.Recipients[0].Params["items"] = items
	results, err := newMailer(t, transport.NewMemory(), postroom.Options{MaxRenderBytes: 1000}).Send(t.Context(), call)
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	if r.Status != postroom.StatusInvalid || r.Code != postroom.ReasonRenderError || r.Reason != "render-error: html: output over the render size limit" {
		t.Errorf("result %+v, want render-error naming html and the size limit", r)
	}
}

// TestRecipientAddressChecks checks the recipient-level refusals: an
// address with a trailing CR or LF is not trimmed and sent, an
// encoded-word look-alike is refused, and so is a name with a control
// character.
func TestRecipientAddressChecks(t *testing.T) {
	tests := []struct {
		email, name string
		code        postroom.ReasonCode
	}{
		{"cr@example.com\r", "", postroom.ReasonInvalidEmail},
		{"lf@example.com\n", "", postroom.ReasonInvalidEmail},
		{"crlf@example.com\r\n", "", postroom.ReasonInvalidEmail},
		{"\nlead@example.com", "", postroom.ReasonInvalidEmail},
		{"vt@example.com\v", "", postroom.ReasonInvalidEmail},
		{"=?utf-8?q?ann=40victim.example?=@attacker.example", "", postroom.ReasonInvalidEmail},
		{"name@example.com", "Ann\vX", postroom.ReasonInvalidEmail},
		{"name2@example.com", "Ann\x1b[31m", postroom.ReasonInvalidEmail},
		{" \tspaces@example.com\t ", "Ann\tB", ""},
	}
	call := smallCall()
	for _, tt := range tests {
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: tt.email, Name: tt.name})
	}
	mem := transport.NewMemory()
	results, err := newMailer(t, mem, postroom.Options{}).Send(t.Context(), call)
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		r := results[i]
		wantStatus := postroom.StatusInvalid
		if tt.code == "" {
			wantStatus = postroom.StatusSent
		}
		if r.Status != wantStatus || r.Code != tt.code {
			t.Errorf("%q (name %q): %s %q, want %s %s", tt.email, tt.name, r.Status, r.Reason, wantStatus, tt.code)
		}
	}
	if mem.Len() != 1 || mem.Envelopes()[0].To[0] != "spaces@example.com" {
		t.Fatalf("%d messages sent, want only spaces@example.com's", mem.Len())
	}
}

// TestReasonNamesCharacters checks that a non-ASCII character is named as
// the character, not as the first byte of its UTF-8 form, and that one bad
// cid gives one error.
func TestReasonNamesCharacters(t *testing.T) {
	png := postroom.Image{Name: "logo.png", CID: "logo@größe", ContentType: "image/png", Content: "cG5n"}
	tests := []struct {
		name   string
		mutate func(c *postroom.Call)
		field  string
		char   string
	}{
		{"cid", func(c *postroom.Call) {
			c.Message.HTML = `<img src="cid:logo@größe">`
			c.Message.Images = []postroom.Image{png}
		}, "message.images[0].cid", "'ö'"},
		{"header name", func(c *postroom.Call) {
			c.Message.Headers = []postroom.Header{{Name: "X-Größe", Value: "1"}}
		}, "message.headers[0].name", "'ö'"},
		{"from name", func(c *postroom.Call) { c.Message.FromName = "Shop\v" }, "message.from_name", "U+000B"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := smallCall("a@example.com")
			tt.mutate(call)
			_, err := newMailer(t, transport.NewMemory(), postroom.Options{}).Send(t.Context(), call)
			ves := postroom.ValidationErrors(err)
			if len(ves) != 1 || ves[0].Field != tt.field {
				t.Fatalf("errors %v, want one on %s", err, tt.field)
			}
			if !strings.Contains(ves[0].Reason, tt.char) || strings.Contains(ves[0].Reason, "Ã") {
				t.Errorf("reason %q, want it to name %s", ves[0].Reason, tt.char)
			}
		})
	}
}
