package dkim

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	crand "crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"time"

	msgauth "github.com/emersion/go-msgauth/dkim"
	"github.com/postroom/postroom/internal/mimemsg"
)

// sign appends to dst[:0] one DKIM-Signature field per signer, then msg,
// and returns the extended buffer: the full canonicalization's signing,
// without the room SignInPlace writes into. msg must not alias dst.
func (d *Call) sign(s *Scratch, dst, msg []byte) ([]byte, error) {
	dst, err := d.AppendFields(s, dst[:0], msg)
	if err != nil {
		return dst, err
	}
	return append(dst, msg...), nil
}

// fuzzDKIMKey is the ed25519 key FuzzDKIMCanon signs with.
var fuzzDKIMKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))

// allDKIMKeys is the h= list of a call that has every optional field.
func allDKIMKeys() []string {
	var hs []mimemsg.Header
	for _, name := range optionalFields {
		hs = append(hs, mimemsg.Header{Name: name})
	}
	return headerKeys(hs)
}

// FuzzDKIMCanon signs arbitrary messages with postroom's signer and with
// go-msgauth's, ed25519 with every field postroom can sign, and requires
// the same bh= (the canonical body) and the same DKIM-Signature field
// (ed25519 is deterministic: the same b= is the same header hash input).
// The input is first brought into the signer's domain: bare CRs are
// dropped (RFC 6376 gives them no meaning and go-msgauth takes them for
// line ends), and messages with a field name that is not printable ASCII
// are skipped (go-msgauth compares and lower-cases names as Unicode).
func FuzzDKIMCanon(f *testing.F) {
	for _, seed := range []string{
		"From: Ann <ann@example.net>\r\nTo: bob@example.com\r\nSubject: Hi\r\n\r\nHello  there \r\n\r\n",
		"From: a\r\nFrom: b\r\nSubject:\r\n  folded\r\n\tvalue  \r\n\r\nline\r\n \t\r\n\r\nlast",
		"from : x\r\nREPLY-TO:\ty\r\nList-Unsubscribe: <https://x.example/u>\r\n\r\n",
		"\r\n\r\n\r\n",
		"Date: now\nMessage-ID: <a@b>\n\nbare\nlf  \n",
		"Content-Type: text/plain\r\nMIME-Version: 1.0\r\n\r\nQUJD\r\nREVG\r\n\r\n",
	} {
		f.Add([]byte(seed))
	}
	keys := allDKIMKeys()
	signer := Signer{Domain: "example.com", Selector: "fuzz", Key: fuzzDKIMKey}
	f.Fuzz(func(t *testing.T, msg []byte) {
		msg = dropBareCR(msg)
		fields, _, err := scanHeader(nil, msg)
		if err != nil {
			return // go-msgauth fails on a message without a body too
		}
		for _, fl := range fields {
			for _, c := range fieldName(msg[fl.start:fl.end]) {
				if c >= 0x7f || c < ' ' && c != '\t' && c != '\r' && c != '\n' {
					return
				}
			}
		}
		s, err := msgauth.NewSigner(&msgauth.SignOptions{
			Domain: signer.Domain, Selector: signer.Selector, Signer: signer.Key, Hash: crypto.SHA256,
			HeaderCanonicalization: msgauth.CanonicalizationRelaxed, BodyCanonicalization: msgauth.CanonicalizationRelaxed,
			HeaderKeys: keys,
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write(msg); err != nil {
			s.Close()
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("go-msgauth: %v", err)
		}
		theirs := s.Signature()
		ts, err := strconv.ParseInt(fuzzTag(theirs, "t"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		var scratch Scratch
		out, err := NewCallKeys([]Signer{signer}, keys, time.Unix(ts, 0)).sign(&scratch, nil, msg)
		if err != nil {
			t.Fatal(err)
		}
		ours := string(out[:len(out)-len(msg)])
		if got, want := fuzzTag(ours, "bh"), fuzzTag(theirs, "bh"); got != want {
			var h recordingHash
			_, body, _ := scanHeader(nil, msg)
			hashRelaxedBody(&h, msg[body:], nil, bodySpan{})
			t.Fatalf("bh=%s, go-msgauth's %s; our canonical body %q", got, want, h.String())
		}
		if ours != theirs {
			t.Fatalf("field\n%q\ngo-msgauth's\n%q", ours, theirs)
		}
	})
}

// dropBareCR returns msg without the CRs that do not start a CRLF.
func dropBareCR(msg []byte) []byte {
	out := make([]byte, 0, len(msg))
	for i, c := range msg {
		if c == '\r' && (i+1 == len(msg) || msg[i+1] != '\n') {
			continue
		}
		out = append(out, c)
	}
	return out
}

// fuzzTag returns the value of tag name in a DKIM-Signature field, its
// folding white space removed.
func fuzzTag(field, name string) string {
	_, v, _ := strings.Cut(field, ":")
	for tag := range strings.SplitSeq(v, ";") {
		k, val, _ := strings.Cut(tag, "=")
		if strings.TrimSpace(k) == name {
			return strings.Join(strings.Fields(val), "")
		}
	}
	return ""
}

// BenchmarkDKIMSign signs one message of about 140 KB (a text part and
// a base64 attachment, the attachment in the static tail every message of
// its call ends with) with an ed25519 key: postroom's signer as the Mailer
// runs it, the same with the full canonicalization (no static tail), the
// floor (the SHA-256 of the message and a copy of it), and go-msgauth's
// signer.
func BenchmarkDKIMSign(b *testing.B) {
	var msg []byte
	msg = append(msg, "From: Shop <news@shop.example.com>\r\nTo: ann@example.net\r\nSubject: This  week\r\n"+
		"Date: Mon, 23 Nov 2026 12:00:00 +0000\r\nMessage-ID: <x@shop.example.com>\r\nMIME-Version: 1.0\r\n"+
		"Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\n"...)
	for range 40 {
		msg = append(msg, "Our new arrivals, in  the shop this week: \r\n\r\n"...)
	}
	tailAt := len(msg)
	msg = append(msg, "--b\r\nContent-Type: application/pdf\r\nContent-Transfer-Encoding: base64\r\n\r\n"...)
	for i := range 1800 {
		msg = append(msg, base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{byte(i)}, 57))...)
		msg = append(msg, "\r\n"...)
	}
	msg = append(msg, "--b--\r\n"...)
	signer := Signer{Domain: "example.com", Selector: "bench", Key: fuzzDKIMKey}
	keys := allDKIMKeys()
	for _, v := range []struct {
		name string
		tail []byte
	}{{"postroom", msg[tailAt-2:]}, {"postroom-full", nil}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(msg)))
			d := NewCallKeys([]Signer{signer}, keys, time.Unix(1700000000, 0))
			d.tail = newStaticTail(v.tail)
			var s Scratch
			var dst []byte
			for b.Loop() {
				var err error
				if dst, err = d.sign(&s, dst, msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("sha256+copy", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(msg)))
		dst := make([]byte, len(msg))
		for b.Loop() {
			copy(dst, msg)
			sha256.Sum256(msg)
		}
	})
	b.Run("go-msgauth", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			s, err := msgauth.NewSigner(&msgauth.SignOptions{
				Domain: signer.Domain, Selector: signer.Selector, Signer: signer.Key, Hash: crypto.SHA256,
				HeaderCanonicalization: msgauth.CanonicalizationRelaxed, BodyCanonicalization: msgauth.CanonicalizationRelaxed,
				HeaderKeys: keys,
			})
			if err != nil {
				b.Fatal(err)
			}
			s.Write(msg)
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestDKIMSignInPlace checks that signing a message in the room reserved
// ahead of it gives the message sign gives, with ed25519 and RSA keys:
// written in place when the fields fill the room exactly, and copied when
// they do not (a room made too large or too small here, as a key whose
// signature is not of its key's length would).
func TestDKIMSignInPlace(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(crand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	signers := []Signer{
		{Domain: "example.com", Selector: "ed", Key: fuzzDKIMKey},
		{Domain: "example.net", Selector: "rsa", Key: rsaKey},
	}
	msg := []byte("From: a@example.com\r\nTo: b@example.net\r\nSubject: x\r\n\r\nHello  there\r\n")
	for _, tc := range []struct {
		name     string
		off      int
		inPlace  bool
		nSigners int
	}{
		{"ed25519", 0, true, 1},
		{"ed25519 and rsa", 0, true, 2},
		{"room too large", 7, false, 2},
		{"room too small", -7, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := NewCallKeys(signers[:tc.nSigners], allDKIMKeys(), time.Unix(1700000000, 0))
			var s Scratch
			want, err := d.sign(&s, nil, msg)
			if err != nil {
				t.Fatal(err)
			}
			if tc.off == 0 && d.Room() != len(want)-len(msg) {
				t.Fatalf("room %d, the fields are %d octets", d.Room(), len(want)-len(msg))
			}
			d.fieldsLen += tc.off
			buf := append(d.Reserve(nil), msg...)
			got, err := d.SignInPlace(&s, buf)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("signed in place:\n%s\nsign:\n%s", got, want)
			}
			if inPlace := &got[0] == &buf[0]; inPlace != tc.inPlace {
				t.Errorf("signed in place: %v, want %v", inPlace, tc.inPlace)
			}
		})
	}
	if got := (*Call)(nil).Room(); got != 0 {
		t.Errorf("nil Call: room %d", got)
	}
}
