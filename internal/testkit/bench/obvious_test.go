package bench

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/emersion/go-msgauth/dkim"
	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/fixture"
	"github.com/postroom/postroom/postroomtest"
)

// recorder is a Transport that keeps a copy of every message.
type recorder struct {
	mu   sync.Mutex
	msgs [][]byte
}

func (r *recorder) Send(_ context.Context, env *postroom.Envelope) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, bytes.Clone(env.Data))
	return nil
}

// sides sends call with postroom (options opts) and with o, each into a
// recorder of its own, and returns what each recorded.
func sides(t *testing.T, call *postroom.Call, opts postroom.Options, o *Obvious) (pr, obvious [][]byte) {
	t.Helper()
	var p, ob recorder
	opts.Auth = postroom.NoAuth{}
	m, err := postroom.New(&p, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := SendAll(t.Context(), m, call); err != nil {
		t.Fatal(err)
	}
	o.Transport = &ob
	if err := o.Send(t.Context(), fixture.PlainCall(call)); err != nil {
		t.Fatal(err)
	}
	if len(p.msgs) != len(call.Recipients) || len(ob.msgs) != len(call.Recipients) {
		t.Fatalf("%d and %d messages, want %d each", len(p.msgs), len(ob.msgs), len(call.Recipients))
	}
	return p.msgs, ob.msgs
}

// TestHTMLOnlySameWork: on a call without text, both sides write a text
// part made from the html, with the html's words and none of its tags.
func TestHTMLOnlySameWork(t *testing.T) {
	w := fixture.Shared(t)
	pr, obvious := sides(t, HTMLOnlyCall(w, 3), postroom.Options{}, &Obvious{})
	for side, msgs := range map[string][][]byte{"postroom": pr, "obvious": obvious} {
		for i, data := range msgs {
			text := postroomtest.Parse(t, data).Leaf(t, "text/plain").Body
			if len(bytes.TrimSpace(text)) == 0 || bytes.Contains(text, []byte("<td")) || bytes.Contains(text, []byte("</")) {
				t.Errorf("%s, message %d: the text part is not the html's text:\n%.600s", side, i, text)
			}
			if !bytes.Contains(text, []byte("ORD-")) {
				t.Errorf("%s, message %d: the text part has no order number:\n%.600s", side, i, text)
			}
		}
	}
}

// TestDKIMSameWork: with one key, every message of both sides carries a
// DKIM signature that go-msgauth verifies against that key's record.
func TestDKIMSameWork(t *testing.T) {
	w := fixture.Shared(t)
	for _, kind := range DKIMKeys[1:] {
		t.Run(kind, func(t *testing.T) {
			key, err := dkimKey(kind)
			if err != nil {
				t.Fatal(err)
			}
			record := dkimRecord(t, key)
			opts := &dkim.VerifyOptions{LookupTXT: func(domain string) ([]string, error) {
				if domain != dkimSelector+"._domainkey."+dkimDomain {
					return nil, fmt.Errorf("no record for %s", domain)
				}
				return []string{record}, nil
			}}
			pr, obvious := sides(t, w.Call(2), postroom.Options{DKIM: postroomDKIM(key)}, &Obvious{DKIM: obviousDKIM(key)})
			for side, msgs := range map[string][][]byte{"postroom": pr, "obvious": obvious} {
				for i, data := range msgs {
					vs, err := dkim.VerifyWithOptions(bytes.NewReader(data), opts)
					if err != nil || len(vs) != 1 || vs[0].Err != nil {
						t.Errorf("%s, message %d: verifications %v, %v", side, i, vs, err)
						continue
					}
					if vs[0].Domain != dkimDomain {
						t.Errorf("%s, message %d: signed for %s", side, i, vs[0].Domain)
					}
				}
			}
		})
	}
}

// dkimRecord returns the DNS TXT record of key's public key.
func dkimRecord(t *testing.T, key crypto.Signer) string {
	t.Helper()
	switch pub := key.Public().(type) {
	case ed25519.PublicKey:
		return "v=DKIM1; k=ed25519; p=" + base64.StdEncoding.EncodeToString(pub)
	default:
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		return "v=DKIM1; k=rsa; p=" + base64.StdEncoding.EncodeToString(der)
	}
}

// TestParseOnce: an Obvious that keeps its parsed templates sends the
// same html on its second call as one that parses every call, and its
// second call parses nothing new.
func TestParseOnce(t *testing.T) {
	w := fixture.Shared(t)
	call := fixture.PlainCall(w.Call(2))
	var want recorder
	if err := (&Obvious{Transport: &want}).Send(t.Context(), call); err != nil {
		t.Fatal(err)
	}
	var got recorder
	o := &Obvious{Transport: &got, ParseOnce: true}
	count := func() int {
		n := 0
		o.parsed.Range(func(any, any) bool { n++; return true })
		return n
	}
	var parsed int
	for i := range 2 {
		got.msgs = nil
		if err := o.Send(t.Context(), call); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			parsed = count()
		} else if n := count(); n != parsed {
			t.Errorf("the second call parsed %d more templates", n-parsed)
		}
		htmlOf := func(msgs [][]byte) map[string]bool {
			m := map[string]bool{}
			for _, d := range msgs {
				m[string(htmlPart(t, d))] = true
			}
			return m
		}
		g, wnt := htmlOf(got.msgs), htmlOf(want.msgs)
		for h := range wnt {
			if !g[h] {
				t.Errorf("call %d: an html part differs from the one parsed every call", i)
			}
		}
	}
	if parsed < 3 {
		t.Errorf("%d templates kept, want at least the subject, html and text", parsed)
	}
}

// TestFreshFiles: the copies OneRecipientFresh sends hold the same files
// in strings that share no bytes with the workload's.
func TestFreshFiles(t *testing.T) {
	w := fixture.Shared(t)
	orig := w.Call(1)
	fresh := freshFiles(w.Call(1))
	if len(orig.Message.Images)+len(orig.Message.Attachments) == 0 {
		t.Fatal("the workload has no files")
	}
	same := func(what string, i int, a, b string) {
		if a != b {
			t.Errorf("%s %d: content differs", what, i)
		}
		if len(a) > 0 && unsafe.StringData(a) == unsafe.StringData(b) {
			t.Errorf("%s %d: the copy shares the original's bytes", what, i)
		}
	}
	for i, img := range orig.Message.Images {
		same("image", i, img.Content, fresh.Message.Images[i].Content)
	}
	for i, a := range orig.Message.Attachments {
		same("attachment", i, a.Content, fresh.Message.Attachments[i].Content)
	}
	if w.Base.Message.Images[0].Content != orig.Message.Images[0].Content {
		t.Error("freshFiles changed the workload")
	}
}
