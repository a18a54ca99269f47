package postroom_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aymerick/raymond"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/fixture"
	"github.com/postroom/postroom/postroomtest"
	"github.com/postroom/postroom/templatestore"
	"github.com/postroom/postroom/transport"
)

func TestNew(t *testing.T) {
	tr := transport.NewMemory()
	tests := []struct {
		name string
		tr   postroom.Transport
		opts postroom.Options
	}{
		{"nil auth", tr, postroom.Options{}},
		{"nil transport", nil, postroom.Options{Auth: postroom.NoAuth{}}},
		{"negative concurrency", tr, postroom.Options{Auth: postroom.NoAuth{}, Concurrency: -1}},
		{"negative max recipients", tr, postroom.Options{Auth: postroom.NoAuth{}, MaxRecipients: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if m, err := postroom.New(tt.tr, tt.opts); err == nil || m != nil {
				t.Fatalf("New = %v, %v; want an error", m, err)
			}
		})
	}
}

// TestSendWorkload sends the shared fixture's call to 16 recipients, with
// two bcc addresses, and checks each message as a reader sees it: one
// subtest per concern, each over all 16 messages.
func TestSendWorkload(t *testing.T) {
	call := fixture.Shared(t).Call(16)
	call.Message.BCC = "audit@shop.example.com, Archive <archive@shop.example.com>"
	mem := transport.NewMemory()
	m := newMailer(t, mem, postroom.Options{})
	results, err := m.Send(t.Context(), call)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if len(results) != 16 || mem.Len() != 16 {
		t.Fatalf("got %d results and %d messages, want 16 and 16", len(results), mem.Len())
	}
	// sent is one recipient's result with its envelope and message parsed.
	type sent struct {
		r   postroom.Recipient
		res postroom.Result
		env postroom.Envelope
		p   *postroomtest.Message
	}
	var msgs []sent
	if !t.Run("results", func(t *testing.T) {
		seen := map[string]bool{}
		for i, res := range results {
			r := call.Recipients[i]
			if res.Email != r.Email || res.Status != postroom.StatusSent || res.Reason != "" {
				t.Fatalf("result %d = %+v, want %s sent", i, res, r.Email)
			}
			if !sendIDPattern.MatchString(res.SendID) || seen[res.SendID] {
				t.Fatalf("result %d send_id %q: not 32 hex or not unique", i, res.SendID)
			}
			seen[res.SendID] = true
			env, ok := mem.Envelope(res.SendID)
			if !ok {
				t.Fatalf("no message for send_id %s", res.SendID)
			}
			msgs = append(msgs, sent{r: r, res: res, env: env, p: postroomtest.Parse(t, env.Data)})
		}
	}) {
		return
	}

	t.Run("envelope", func(t *testing.T) {
		for _, s := range msgs {
			if s.env.From != "orders@shop.example.com" || strings.Join(s.env.To, " ") != s.r.Email+" audit@shop.example.com archive@shop.example.com" {
				t.Fatalf("envelope from %q to %q", s.env.From, s.env.To)
			}
		}
	})
	t.Run("header fields", func(t *testing.T) {
		wantKeys := "From To Subject Date Message-ID MIME-Version X-Campaign-ID X-Entity-Ref-ID List-Unsubscribe Content-Type"
		for _, s := range msgs {
			if got := strings.Join(s.p.Keys, " "); got != wantKeys {
				t.Fatalf("header fields %q, want %q", got, wantKeys)
			}
		}
	})
	t.Run("bcc hidden", func(t *testing.T) {
		for _, s := range msgs {
			if s.p.Header.Get("Bcc") != "" || bytes.Contains(s.env.Data, []byte("audit@")) || bytes.Contains(s.env.Data, []byte("archive@")) {
				t.Fatalf("a bcc address appears in the message")
			}
		}
	})
	t.Run("from and to", func(t *testing.T) {
		for _, s := range msgs {
			from, _ := s.p.Header.AddressList("From")
			to, _ := s.p.Header.AddressList("To")
			if len(from) != 1 || from[0].Name != "Example Shop" || from[0].Address != "orders@shop.example.com" {
				t.Fatalf("From = %v", from)
			}
			if len(to) != 1 || to[0].Name != s.r.Name || to[0].Address != s.r.Email {
				t.Fatalf("To = %v, want %s <%s>", to, s.r.Name, s.r.Email)
			}
		}
	})
	t.Run("subject", func(t *testing.T) {
		for _, s := range msgs {
			wantSubject := fmt.Sprintf("Your order #%s is confirmed, %s", s.r.Params["order_id"], s.r.Params["first_name"].(string))
			if got := s.p.HeaderValue("Subject"); got != wantSubject {
				t.Fatalf("Subject %q, want %q (no HTML escaping)", got, wantSubject)
			}
		}
	})
	t.Run("message-id, date and fixed headers", func(t *testing.T) {
		for _, s := range msgs {
			if got := s.p.Header.Get("Message-ID"); got != "<"+s.res.SendID+"@shop.example.com>" {
				t.Fatalf("Message-ID %q", got)
			}
			if _, err := s.p.Header.Date(); err != nil {
				t.Fatalf("Date: %v", err)
			}
			if s.p.Header.Get("MIME-Version") != "1.0" || s.p.Header.Get("X-Campaign-ID") != "order-confirmation-2024" {
				t.Fatalf("headers %v", s.p.Header)
			}
		}
	})
	if !t.Run("mime tree", func(t *testing.T) {
		wantPaths := []string{
			"multipart/mixed>multipart/alternative>text/plain",
			"multipart/mixed>multipart/alternative>multipart/related>text/html",
			"multipart/mixed>multipart/alternative>multipart/related>image/png",
			"multipart/mixed>multipart/alternative>multipart/related>image/png",
			"multipart/mixed>application/pdf",
		}
		for _, s := range msgs {
			if got := strings.Join(s.p.Paths(), " "); got != strings.Join(wantPaths, " ") {
				t.Fatalf("tree %v, want %v", s.p.Paths(), wantPaths)
			}
		}
	}) {
		return // the subtests below read the parts by index
	}
	t.Run("html", func(t *testing.T) {
		html := raymond.MustParse(call.Message.HTML)
		for i, s := range msgs {
			params := maps.Clone(call.GlobalParams)
			maps.Copy(params, s.r.Params)
			wantHTML, err := html.Exec(fixture.Plain(params))
			if err != nil {
				t.Fatal(err)
			}
			// raymond escapes ' as &apos;, handlebars.js (the reference) as &#x27;.
			wantHTML = strings.ReplaceAll(wantHTML, "&apos;", "&#x27;")
			// Text bodies travel with CRLF line breaks (RFC 2045 §6.7).
			if got := string(s.p.Parts[1].Body); got != strings.ReplaceAll(wantHTML, "\n", "\r\n") {
				t.Fatalf("recipient %d: html differs from raymond's rendering", i)
			}
		}
	})
	t.Run("text", func(t *testing.T) {
		for _, s := range msgs {
			text := string(s.p.Parts[0].Body)
			if !strings.Contains(text, "Hi "+s.r.Params["first_name"].(string)+",") || strings.Contains(text, "&apos;") || strings.Contains(text, "&amp;") {
				t.Fatalf("text body not rendered as is: %.80q", text)
			}
		}
	})
	t.Run("images", func(t *testing.T) {
		logo := mustB64(t, call.Message.Images[0].Content)
		banner := mustB64(t, call.Message.Images[1].Content)
		for _, s := range msgs {
			for j, img := range [][]byte{logo, banner} {
				pt := s.p.Parts[2+j]
				if pt.Header.Get("Content-ID") != "<"+call.Message.Images[j].CID+">" || !strings.HasPrefix(pt.Header.Get("Content-Disposition"), "inline") || !bytes.Equal(pt.Body, img) {
					t.Fatalf("image %d: Content-ID %q, disposition %q, %d bytes", j, pt.Header.Get("Content-ID"), pt.Header.Get("Content-Disposition"), len(pt.Body))
				}
			}
		}
	})
	t.Run("attachment", func(t *testing.T) {
		pdf := mustB64(t, call.Message.Attachments[0].Content)
		for _, s := range msgs {
			att := s.p.Parts[4]
			if !bytes.Equal(att.Body, pdf) || !strings.Contains(att.Header.Get("Content-Disposition"), "invoice.pdf") {
				t.Fatalf("attachment: %d bytes, disposition %q", len(att.Body), att.Header.Get("Content-Disposition"))
			}
		}
	})
}

func TestSendTemplate(t *testing.T) {
	store := templatestore.NewMemory()
	if err := store.Put("acct", "welcome-html", "<h1>Welcome {{name}}</h1>"); err != nil {
		t.Fatal(err)
	}
	if err := store.Put("acct", "welcome-text", "Welcome {{name}}"); err != nil {
		t.Fatal(err)
	}
	if err := store.Put("other", "secret", "other account's"); err != nil {
		t.Fatal(err)
	}
	mem := transport.NewMemory()
	m := newMailer(t, mem, postroom.Options{Templates: store, Auth: postroom.StaticKeys{"acct": {"k"}, "other": {"k2"}}})
	call := smallCall("a@example.com")
	call.Message.HTML, call.Message.Text = "", ""
	call.Message.HTMLTemplateID, call.Message.TextTemplateID = "welcome-html", "welcome-text"
	call.Message.ReplyToName, call.Message.ReplyToEmail = "Help Desk", "help@shop.example.com"
	results, err := m.SendTemplate(t.Context(), call)
	if err != nil || results[0].Status != postroom.StatusSent {
		t.Fatalf("SendTemplate = %v, %v", results, err)
	}
	env, _ := mem.Envelope(results[0].SendID)
	p := postroomtest.Parse(t, env.Data)
	if got := string(p.Find(t, "multipart/alternative>text/html").Body); got != "<h1>Welcome Ann</h1>" {
		t.Fatalf("html %q", got)
	}
	if rt, _ := p.Header.AddressList("Reply-To"); len(rt) != 1 || rt[0].Name != "Help Desk" || rt[0].Address != "help@shop.example.com" {
		t.Fatalf("Reply-To %v", rt)
	}
	if strings.Join(p.Keys[:4], " ") != "From To Reply-To Subject" {
		t.Fatalf("header order %v", p.Keys)
	}

	t.Run("another account's template", func(t *testing.T) {
		c := *call
		c.Message.HTMLTemplateID, c.Message.TextTemplateID = "secret", ""
		_, err := m.SendTemplate(t.Context(), &c)
		var ve *postroom.ValidationError
		if !errors.Is(err, postroom.ErrTemplateNotFound) || !errors.As(err, &ve) || ve.Field != "message.html_template_id" {
			t.Fatalf("err = %v, want ErrTemplateNotFound on message.html_template_id", err)
		}
	})
	t.Run("wrong key", func(t *testing.T) {
		c := *call
		c.Key = "k2"
		if _, err := m.SendTemplate(t.Context(), &c); !errors.Is(err, postroom.ErrUnauthorized) {
			t.Fatalf("err = %v, want ErrUnauthorized", err)
		}
	})
	t.Run("no store", func(t *testing.T) {
		_, err := newMailer(t, mem, postroom.Options{}).SendTemplate(t.Context(), call)
		if !errors.Is(err, postroom.ErrTemplateNotFound) {
			t.Fatalf("err = %v, want ErrTemplateNotFound", err)
		}
	})
}

func TestDeterministic(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var outputs [2][]postroom.Envelope
	for k := range outputs {
		mem := transport.NewMemory()
		m := newMailer(t, mem, postroom.Options{Rand: &fixedRand{}, Now: func() time.Time { return now }})
		if _, err := m.Send(t.Context(), fixture.Shared(t).Call(16)); err != nil {
			t.Fatal(err)
		}
		outputs[k] = mem.Envelopes()
	}
	byID := map[string][]byte{}
	for _, e := range outputs[0] {
		byID[e.SendID] = e.Data
	}
	for _, e := range outputs[1] {
		if !bytes.Equal(byID[e.SendID], e.Data) {
			t.Fatalf("message %s differs between two runs with the same Rand and Now", e.SendID)
		}
	}
}

// TestSendBytesPinned pins the bytes of deterministic Sends (Options.Rand
// and Options.Now fixed): the workload's call of 64 recipients and a small
// call, unsigned, signed with an ed25519 and an rsa-2048 key, and with the
// ed25519 key alone. The hash covers each envelope (send id, sender,
// recipients) and its message, in send id order. A change that moves code
// (a refactoring, an engine moved into a package of its own) must leave
// it as it is; a change of the bytes on purpose updates it and says why.
func TestSendBytesPinned(t *testing.T) {
	signers, _ := testSigners(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		signers []postroom.DKIMSigner
		want    string
	}{
		{"unsigned", nil, "ed76dbd8e640203c5135051369edaa1857009f3c409a9e20d68980117209a919"},
		{"ed25519 and rsa-2048", signers, "8202c3e2ebf431e83fa3fe78f6b6857ada080f3d7e804b17e40dfc950b981f81"},
		{"ed25519", signers[:1], "579c2ca2c5d983790257af909c5383c7486ec896a2315f7caa57e639b1377d1c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := transport.NewMemory()
			m := newMailer(t, mem, postroom.Options{DKIM: tc.signers, Rand: &fixedRand{}, Now: func() time.Time { return now }})
			for _, c := range []*postroom.Call{fixture.Shared(t).Call(64), smallCall("ann@example.net", "bob@example.org")} {
				if _, err := m.Send(t.Context(), c); err != nil {
					t.Fatal(err)
				}
			}
			envs := mem.Envelopes()
			slices.SortFunc(envs, func(a, b postroom.Envelope) int { return strings.Compare(a.SendID, b.SendID) })
			h := sha256.New()
			for _, e := range envs {
				fmt.Fprintf(h, "%s|%s|%v|%d|", e.SendID, e.From, e.To, len(e.Data))
				h.Write(e.Data)
			}
			if got := hex.EncodeToString(h.Sum(nil)); len(envs) != 66 || got != tc.want {
				t.Errorf("%d messages hashing to %s; want 66 hashing to %s", len(envs), got, tc.want)
			}
		})
	}
}

func TestConcurrentCalls(t *testing.T) {
	mem := transport.NewMemory()
	m := newMailer(t, mem, postroom.Options{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			results, err := m.Send(t.Context(), fixture.Shared(t).Call(20))
			if err != nil || len(results) != 20 {
				t.Errorf("Send = %d results, %v", len(results), err)
			}
		})
	}
	wg.Wait()
	if mem.Len() != 80 {
		t.Fatalf("%d messages, want 80", mem.Len())
	}
}

func TestNoGoroutineOutlivesSend(t *testing.T) {
	before := runtime.NumGoroutine()
	call := fixture.Shared(t).Call(200)
	if _, err := newMailer(t, transport.NewMemory(), postroom.Options{}).Send(t.Context(), call); err != nil {
		t.Fatal(err)
	}
	// A worker may still be between its deferred Done and its return.
	waitGoroutines(t, before)
}

// TestZeroMailer: a Mailer not made by New, zero or nil, returns
// ErrZeroMailer from every method instead of panicking.
func TestZeroMailer(t *testing.T) {
	var zero postroom.Mailer
	var nilMailer *postroom.Mailer
	for name, m := range map[string]*postroom.Mailer{"zero": &zero, "nil": nilMailer} {
		t.Run(name, func(t *testing.T) {
			call := smallCall("a@example.com")
			for op, run := range map[string]func() error{
				"Send":         func() error { _, err := m.Send(t.Context(), call); return err },
				"SendTemplate": func() error { _, err := m.SendTemplate(t.Context(), call); return err },
				"Run":          func() error { _, err := m.Run(t.Context(), postroom.OpSend, call, postroom.RunOptions{}); return err },
				"Preview": func() error {
					_, err := m.Preview(t.Context(), postroom.OpSend, call, postroom.PreviewOptions{})
					return err
				},
			} {
				if err := run(); !errors.Is(err, postroom.ErrZeroMailer) {
					t.Errorf("%s: %v; want ErrZeroMailer", op, err)
				}
			}
		})
	}
}
