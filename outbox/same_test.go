package outbox_test

import (
	"bytes"
	"io"
	"mime"
	"net/mail"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/outboxenv"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/transport"
)

// TestSameMessagesAsSend checks that a job's part of a call (the same
// message, a subset of the recipients, params back from JSON) makes for
// each recipient the message Send makes: the same header fields and the
// same body, except what differs between any two sends (Date,
// Message-ID, MIME boundaries, send ids).
func TestSameMessagesAsSend(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		call := newCall("same", 7)
		call.Message.Subject = "Order {{n}} for {{name}}{{#if vip}} (VIP){{/if}}"
		call.Message.HTML = `<p>Hello {{name}}, {{n}} items: {{#each items}}{{this}} {{/each}}</p>`
		call.Message.Headers = []postroom.Header{{Name: "X-Order", Value: "{{n}}"}}
		call.GlobalParams = map[string]any{"items": []any{"a", 2, 3.5}}
		for i := range call.Recipients {
			call.Recipients[i].Name = "Ann Example"
			call.Recipients[i].Params = map[string]any{"n": i * 1000, "name": "Ann", "vip": i%2 == 0}
		}
		direct := transport.NewMemory()
		m, err := postroom.New(direct, postroom.Options{Auth: postroom.NoAuth{}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Send(t.Context(), call); err != nil {
			t.Fatal(err)
		}

		queued := transport.NewMemory()
		qm, err := postroom.New(queued, postroom.Options{Auth: postroom.NoAuth{}})
		if err != nil {
			t.Fatal(err)
		}
		db, pool := openDB(t, eng)
		ob, err := outbox.New(qm, db, outbox.Options{JobSize: 3, BatchSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		startClient(t, ob)
		e := &env{db: db, pool: pool, ob: ob}
		e.wait(t, e.enqueue(t, postroom.OpSend, call, outbox.EnqueueOptions{}))

		want := messagesByRecipient(t, direct)
		got := messagesByRecipient(t, queued)
		if len(got) != len(call.Recipients) || len(want) != len(call.Recipients) {
			t.Fatalf("%d messages queued, %d sent directly, for %d recipients", len(got), len(want), len(call.Recipients))
		}
		for rcpt, w := range want {
			if g := got[rcpt]; g != w {
				t.Errorf("%s:\nqueued:\n%s\ndirect:\n%s", rcpt, g, w)
			}
		}
	})
}

// messagesByRecipient returns each message of mem, keyed by its envelope
// recipient, with what differs between two sends of the same call taken
// out: the Date and Message-ID fields, the MIME boundaries, send ids.
func messagesByRecipient(t *testing.T, mem *transport.Memory) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, env := range mem.Envelopes() {
		msg, err := mail.ReadMessage(bytes.NewReader(env.Data))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(msg.Body)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, k := range []string{"From", "To", "Subject", "X-Order", "Mime-Version", "Content-Type"} {
			b.WriteString(k + ": " + msg.Header.Get(k) + "\n")
		}
		text := string(body)
		if _, params, err := mimeBoundary(msg.Header.Get("Content-Type")); err == nil && params != "" {
			text = strings.ReplaceAll(text, params, "BOUNDARY")
			b.Reset()
			for _, k := range []string{"From", "To", "Subject", "X-Order", "Mime-Version"} {
				b.WriteString(k + ": " + msg.Header.Get(k) + "\n")
			}
		}
		text = strings.ReplaceAll(text, env.SendID, "SENDID")
		b.WriteString("\n" + text)
		out[env.To[0]] = b.String()
	}
	return out
}

// mimeBoundary returns the media type and boundary of a Content-Type.
func mimeBoundary(ct string) (string, string, error) {
	mt, params, err := mime.ParseMediaType(ct)
	return mt, params["boundary"], err
}
