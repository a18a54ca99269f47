package dkim

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/postroom/postroom/internal/mimemsg"
)

// canonicalBody returns the relaxed canonical body of msg as
// hashRelaxedBody writes it, with the given tail's shortcut or, for a nil
// tail, without one.
func canonicalBody(t testing.TB, msg []byte, tail *staticTail) []byte {
	t.Helper()
	_, body, err := scanHeader(nil, msg)
	if err != nil {
		t.Fatal(err)
	}
	var span bodySpan
	if tail != nil {
		span = tail.span(msg, body)
	}
	var h recordingHash
	hashRelaxedBody(&h, msg[body:], nil, span)
	return h.Bytes()
}

// TestDKIMStaticTail builds messages of every shape with internal/mimemsg
// (files of several sizes, bodies with white space to rewrite and empty
// lines at their end) and checks that the signature made with the
// skeleton's static tail left out of the canonicalization is the one made
// with the full canonicalization, octet for octet, and that the tail's
// shortcut covers at least every file's base64.
func TestDKIMStaticTail(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	file := func(name string, n int) mimemsg.File {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rnd.Uint32())
		}
		return mimemsg.File{Name: name, CID: name + "@shop", ContentType: "image/png", Data: data}
	}
	texts := []string{"Hello Ann,\n\nYour order  shipped. \t\n", "no line end", "trailing empty lines\n\n\n\n", ""}
	signers := []Signer{{Domain: "example.com", Selector: "t", Key: fuzzDKIMKey}}
	for _, shape := range []struct {
		name              string
		text, html        bool
		images, attachs   []int
		wantShortcutBytes bool
	}{
		{"text", true, false, nil, nil, false},
		{"html", false, true, nil, nil, false},
		{"text+html", true, true, nil, nil, false},
		{"html+images", false, true, []int{1, 57, 4000}, nil, true},
		{"text+attachment", true, false, nil, []int{100000}, true},
		{"all", true, true, []int{3, 140}, []int{0, 56, 58, 30000}, true},
	} {
		for ti, text := range texts {
			t.Run(fmt.Sprintf("%s/%d", shape.name, ti), func(t *testing.T) {
				l := &mimemsg.Layout{
					FromName: "Shop", FromAddr: "news@shop.example.com",
					Date:    time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC),
					Headers: []mimemsg.Header{{Name: "List-Unsubscribe", Dynamic: true}},
					HasText: shape.text, HasHTML: shape.html,
				}
				base64Len := 0
				for i, n := range shape.images {
					l.Images = append(l.Images, file(fmt.Sprintf("img%d", i), n))
					base64Len += base64.StdEncoding.EncodedLen(n)
				}
				for i, n := range shape.attachs {
					f := file(fmt.Sprintf("doc%d", i), n)
					f.CID, f.ContentType = "", "application/pdf"
					l.Attachments = append(l.Attachments, f)
					base64Len += base64.StdEncoding.EncodedLen(n)
				}
				skel, err := mimemsg.New(l, rand.NewChaCha8([32]byte{3}))
				if err != nil {
					t.Fatal(err)
				}
				msg, err := skel.Append(nil, &mimemsg.Varying{
					ToName: "Ann", ToAddr: "ann@example.net", Subject: "Your  order", MessageID: "<1@shop.example.com>",
					HeaderValues: []string{"<https://shop.example.com/u/1>"},
					Text:         []byte(text), HTML: []byte("<p>Hello  Ann</p>\n" + text),
				})
				if err != nil {
					t.Fatal(err)
				}
				d := NewCall(signers, l, skel)
				full := NewCallKeys(signers, d.keys, l.Date)
				if full.tail.from != full.tail.to {
					t.Fatal("NewCallKeys has a static tail")
				}
				var s Scratch
				got, err := d.sign(&s, nil, msg)
				if err != nil {
					t.Fatal(err)
				}
				want, err := full.sign(&s, nil, msg)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("signed with the static tail:\n%s\nwith the full canonicalization:\n%s", got[:len(got)-len(msg)], want[:len(want)-len(msg)])
				}
				if c, f := canonicalBody(t, msg, &d.tail), canonicalBody(t, msg, nil); !bytes.Equal(c, f) {
					t.Errorf("canonical body with the static tail differs from the full canonicalization")
				}
				_, body, _ := scanHeader(nil, msg)
				span := d.tail.span(msg, body)
				if covered := span.to - span.from; shape.wantShortcutBytes && covered < base64Len {
					t.Errorf("the static tail's shortcut covers %d octets, less than the files' %d of base64", covered, base64Len)
				}
			})
		}
	}
}

// FuzzDKIMStaticTail holds the static tail's shortcut to the full relaxed
// canonicalization: for any message that ends with any tail, the
// canonical body is the same with the shortcut as without, and the
// reference's (relaxedBodyReference).
func FuzzDKIMStaticTail(f *testing.F) {
	for _, seed := range []struct{ prefix, tail string }{
		{"From: a\r\n\r\nHello  world \r\n", "\r\n--b\r\nContent-Type: image/png\r\n\r\nQUJD\r\nREVG\r\n--b--\r\n"},
		{"From: a\r\n\r\nqp=\r\n", "\r\n\r\n--b\r\n\r\nQUJD\r\n\r\n\r\n"},
		{"From: a\r\n\r\n", "x\r\n \r\nQUJD  x\r\n\tREVG\r\nend \r\n"},
		{"From: a\r\n\r\nbody", "\n\nbare\nlf\r\nQUJD\r\n"},
		{"From: a\r\n\r\nbody\r", "\nQU\rJD\r\nREVG\r\n"},
		{"From: a\r\n", "\r\n\r\nQUJD\r\n"},
		{"From: a\r\n\r\n", ""},
	} {
		f.Add([]byte(seed.prefix), []byte(seed.tail))
	}
	f.Fuzz(func(t *testing.T, prefix, tail []byte) {
		msg := append(append([]byte(nil), prefix...), tail...)
		if _, _, err := scanHeader(nil, msg); err != nil {
			return
		}
		st := newStaticTail(tail)
		if got, want := canonicalBody(t, msg, &st), canonicalBody(t, msg, nil); !bytes.Equal(got, want) {
			t.Fatalf("with the static tail %q (span %d:%d):\n%q\nfull canonicalization:\n%q", tail, st.from, st.to, got, want)
		}
		_, body, _ := scanHeader(nil, msg)
		if got, want := canonicalBody(t, msg, &st), relaxedBodyReference(msg[body:]); !bytes.Equal(got, want) {
			t.Fatalf("with the static tail %q (span %d:%d):\n%q\nreference:\n%q", tail, st.from, st.to, got, want)
		}
	})
}
