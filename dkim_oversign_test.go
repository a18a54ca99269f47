package postroom_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/postroom/postroom"
)

// forgedFields are the header fields TestDKIMOversigned adds on top of a
// signed message, with the value an attacker on the path might give each.
// guarded fields must break the signatures whether or not the message
// has one; the others only when it has one (a mailing list adds List-*
// fields of its own to a message that has none).
var forgedFields = []struct {
	name, value string
	guarded     bool
}{
	{"From", "Mallory <mallory@evil.example>", true},
	{"Reply-To", "mallory@evil.example", true},
	{"To", "victim@evil.example", true},
	{"Cc", "victim@evil.example", true},
	{"Subject", "Urgent: confirm your password", true},
	{"Date", "Mon, 01 Jan 2024 00:00:00 +0000", true},
	{"Message-ID", "<forged@evil.example>", true},
	{"MIME-Version", "1.0", true},
	{"Content-Type", "text/plain; charset=us-ascii", true},
	{"Content-Transfer-Encoding", "base64", true},
	{"List-Unsubscribe", "<https://evil.example/unsubscribe>", false},
	{"List-Unsubscribe-Post", "List-Unsubscribe=One-Click", false},
	{"In-Reply-To", "<forged@evil.example>", false},
	{"References", "<forged@evil.example>", false},
}

// headerCounts returns how many fields of each name (lower case) the
// header of msg has.
func headerCounts(msg []byte) map[string]int {
	head, _, _ := bytes.Cut(msg, []byte("\r\n\r\n"))
	counts := map[string]int{}
	for line := range strings.SplitSeq(string(head), "\r\n") {
		if line == "" || line[0] == ' ' || line[0] == '\t' {
			continue
		}
		name, _, _ := strings.Cut(line, ":")
		counts[strings.ToLower(strings.TrimSpace(name))]++
	}
	return counts
}

// oversignCorpus is the deliverability corpus's first message of each
// call, and a message whose custom headers are the threading fields.
func oversignCorpus(t *testing.T, signers []postroom.DKIMSigner) map[string][]byte {
	t.Helper()
	msgs := map[string][]byte{}
	for _, m := range sendCorpus(t, postroom.Options{DKIM: signers}) {
		if strings.HasSuffix(m.name, "-0") {
			msgs[m.name] = m.env.Data
		}
	}
	call := smallCall("ann@example.net")
	call.Message.Headers = []postroom.Header{
		{Name: "In-Reply-To", Value: "<order-1001@shop.example.com>"},
		{Name: "References", Value: "<order-1000@shop.example.com> <order-1001@shop.example.com>"},
	}
	m := newMailer(t, postroom.TransportFunc(func(_ context.Context, env *postroom.Envelope) error {
		msgs["threaded"] = bytes.Clone(env.Data)
		return nil
	}), postroom.Options{DKIM: signers})
	if _, err := m.Send(t.Context(), call); err != nil {
		t.Fatal(err)
	}
	return msgs
}

// TestDKIMOversigned adds on top of each signed message, one at a time, a
// field the signatures cover (a second Subject that some mail readers
// show instead of the signed one, a Reply-To that takes the replies
// away) and checks that neither dkimpy nor go-msgauth, verifiers
// independent of the signer, accepts either signature (RFC 6376 §5.4.2,
// §8.15). A Received field added as a relay adds it must still verify,
// as must the message unchanged.
func TestDKIMOversigned(t *testing.T) {
	signers, records := testSigners(t)
	msgs := map[string][]byte{}
	want := map[string]bool{}
	for name, data := range oversignCorpus(t, signers) {
		msgs[name], want[name] = data, true
		relayed := "Received: from relay.example.net by mx.example.org; Mon, 23 Nov 2026 12:00:00 +0000\r\n"
		msgs[name+"+Received"], want[name+"+Received"] = append([]byte(relayed), data...), true
		counts := headerCounts(data)
		for _, f := range forgedFields {
			if !f.guarded && counts[strings.ToLower(f.name)] == 0 {
				continue
			}
			forged := name + "+" + f.name
			msgs[forged] = append([]byte(f.name+": "+f.value+"\r\n"), data...)
			want[forged] = false
		}
	}
	py := verifyDKIMPy(t, records, msgs)
	for name, data := range msgs {
		gv := verifyDKIMGo(t, records, data)
		for i := range signers {
			if len(py[name]) != len(signers) || py[name][i] != want[name] {
				t.Errorf("%s: dkimpy verified %v, want %v for each signature", name, py[name], want[name])
				break
			}
		}
		for i := range signers {
			if len(gv) != len(signers) || gv[i] != want[name] {
				t.Errorf("%s: go-msgauth verified %v, want %v for each signature", name, gv, want[name])
				break
			}
		}
	}
}

// TestDKIMSignsEachFieldOnceMore checks the h= list of every message of
// the corpus against its header: each name in h= is listed more times
// than the message has fields of that name (oversigned), and each field
// of forgedFields the message has is in h=.
func TestDKIMSignsEachFieldOnceMore(t *testing.T) {
	signers, _ := testSigners(t)
	for name, data := range oversignCorpus(t, signers) {
		_, msg := cutDKIMFields(data)
		counts := headerCounts(msg)
		for i, h := range signedHeaders(t, data) {
			listed := map[string]int{}
			for _, k := range h {
				listed[strings.ToLower(k)]++
			}
			for k, n := range listed {
				if n <= counts[k] {
					t.Errorf("%s: signature %d lists %s %d times, the message has %d", name, i, k, n, counts[k])
				}
			}
			for _, f := range forgedFields {
				if k := strings.ToLower(f.name); counts[k] > 0 && listed[k] == 0 {
					t.Errorf("%s: signature %d does not cover %s", name, i, f.name)
				}
			}
		}
	}
}
