package unsubscribe_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/unsubscribe"
)

// BenchmarkMailerOption is a 1,000-recipient Send into a transport that
// drops the bytes, without and with Options.Unsubscribe: the difference is
// the cost of a token, its URL and the two header fields per recipient.
func BenchmarkMailerOption(b *testing.B) {
	list, err := suppression.NewMemory(suppression.Options{})
	if err != nil {
		b.Fatal(err)
	}
	u, err := unsubscribe.New(unsubscribe.Options{
		Keys:         []unsubscribe.Key{{ID: "k1", Secret: bytes.Repeat([]byte{1}, 32)}},
		BaseURL:      "https://mail.example.com/u/",
		Suppressions: list,
	})
	if err != nil {
		b.Fatal(err)
	}
	call := &postroom.Call{AccountID: "acct-1", Message: postroom.Message{
		FromEmail: "news@shop.example.com", Subject: "News for {{name}}", Text: "Hello {{name}}.",
		Headers: []postroom.Header{postroom.ListID("Shop news", "news.shop.example.com")},
	}}
	for i := range 1000 {
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: fmt.Sprintf("user%d@example.net", i), Params: postroom.Params{"name": "N"}})
	}
	drop := postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { return nil })
	for _, tc := range []struct {
		name  string
		unsub postroom.UnsubscribeURLs
	}{{"off", nil}, {"on", u}} {
		b.Run(tc.name, func(b *testing.B) {
			m, err := postroom.New(drop, postroom.Options{Auth: postroom.NoAuth{}, Unsubscribe: tc.unsub})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				results, err := m.Send(b.Context(), call)
				if err != nil || results[0].Status != postroom.StatusSent {
					b.Fatalf("%v %+v", err, results[0])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(call.Recipients)), "ns/recipient")
		})
	}
}
