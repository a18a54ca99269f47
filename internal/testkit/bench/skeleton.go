package bench

import (
	"encoding/base64"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/postroom/postroom/internal/mimemsg"
	"github.com/postroom/postroom/internal/testkit/fixture"
)

// MIMESkeleton measures the MIME layer alone: the workload's message laid
// out once (mimemsg.New) and written per recipient with Append into a
// reused buffer, with the unrendered bodies and an ASCII subject and name.
// It is what MIMEPostroom measures without the Mailer around it.
func MIMESkeleton(b *testing.B, w *fixture.Workload) {
	msg := &w.Base.Message
	decode := func(s string) []byte {
		d, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	l := &mimemsg.Layout{
		FromName: msg.FromName, FromAddr: msg.FromEmail,
		Date:    time.Date(2024, 11, 5, 9, 30, 0, 0, time.UTC),
		HasText: msg.Text != "", HasHTML: msg.HTML != "",
	}
	for _, h := range msg.Headers {
		l.Headers = append(l.Headers, mimemsg.Header{Name: h.Name, Value: h.Value})
	}
	for _, img := range msg.Images {
		l.Images = append(l.Images, mimemsg.File{Name: img.Name, CID: img.CID, ContentType: img.ContentType, Data: decode(img.Content)})
	}
	for _, a := range msg.Attachments {
		l.Attachments = append(l.Attachments, mimemsg.File{Name: a.Name, ContentType: a.ContentType, Data: decode(a.Content)})
	}
	var seed [32]byte
	sk, err := mimemsg.New(l, rand.NewChaCha8(seed))
	if err != nil {
		b.Fatal(err)
	}
	v := &mimemsg.Varying{
		ToName: "Alice Example", ToAddr: "alice@example.org",
		Subject:      "Your order #ORD-10000000 is confirmed, Alice",
		MessageID:    "<0123456789abcdef0123456789abcdef@shop.example.com>",
		HeaderValues: []string{},
		Text:         []byte(msg.Text), HTML: []byte(msg.HTML),
	}
	out, err := sk.Append(nil, v)
	if err != nil {
		b.Fatal(err)
	}
	m := startMeter(b, len(out), 1, false)
	for b.Loop() {
		if out, err = sk.Append(out[:0], v); err != nil {
			b.Fatal(err)
		}
	}
	m.stop()
}
