package postroom_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-msgauth/dkim"
	"github.com/postroom/postroom"
	pdkim "github.com/postroom/postroom/internal/dkim"
	"github.com/postroom/postroom/internal/testkit/testenv"
)

// The keys in testdata/dkim are test keys made for these tests (openssl
// genpkey), not secrets.

// dkimKey reads the PKCS #8 private key testdata/dkim/<name>.pem.
func dkimKey(t testing.TB, name string) crypto.Signer {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "dkim", name+".pem"))
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatalf("%s: no PEM block", name)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return k.(crypto.Signer)
}

// testSigners are an ed25519 and an rsa-2048 signer, with the TXT records
// (by query name) that publish their public keys.
func testSigners(t testing.TB) ([]postroom.DKIMSigner, map[string]string) {
	t.Helper()
	signers := []postroom.DKIMSigner{
		{Domain: "shop.example.com", Selector: "ed1", Key: dkimKey(t, "ed25519")},
		{Domain: "example.com", Selector: "rsa1", Key: dkimKey(t, "rsa2048")},
	}
	records := map[string]string{}
	for _, s := range signers {
		var rec string
		switch pub := s.Key.Public().(type) {
		case ed25519.PublicKey:
			rec = "v=DKIM1; k=ed25519; p=" + base64.StdEncoding.EncodeToString(pub)
		case *rsa.PublicKey:
			der, err := x509.MarshalPKIXPublicKey(pub)
			if err != nil {
				t.Fatal(err)
			}
			rec = "v=DKIM1; k=rsa; p=" + base64.StdEncoding.EncodeToString(der)
		}
		records[s.Selector+"._domainkey."+s.Domain] = rec
	}
	return signers, records
}

// dkimpyScript verifies every DKIM-Signature of each message file named
// on the command line with dkimpy, answering key queries from the JSON
// file of records (argv[1]), and prints one line per file: its name and a
// 1 or 0 per signature.
const dkimpyScript = `
import json, sys, os, dkim
records = json.load(open(sys.argv[1]))
def dns(name, timeout=5):
    if isinstance(name, bytes):
        name = name.decode()
    rec = records.get(name.rstrip('.').lower())
    return rec.encode() if rec else None
def ok(msg, i):
    try:
        return dkim.DKIM(msg).verify(idx=i, dnsfunc=dns)
    except dkim.DKIMException:
        return False
for path in sys.argv[2:]:
    msg = open(path, 'rb').read()
    head = msg.split(b'\r\n\r\n', 1)[0]
    n = sum(1 for line in head.split(b'\r\n') if line.lower().startswith(b'dkim-signature:'))
    oks = ['1' if ok(msg, i) else '0' for i in range(n)]
    print(os.path.basename(path), *oks)
`

// verifyDKIMPy verifies the messages with Debian's python3-dkim and
// returns, by message name, one result per signature, in order.
func verifyDKIMPy(t *testing.T, records map[string]string, msgs map[string][]byte) map[string][]bool {
	t.Helper()
	testenv.Need(t, "python3-dkim", "/usr/bin/python3", "-c", "import dkim")
	dir := t.TempDir()
	recs, _ := json.Marshal(records)
	args := []string{"-c", dkimpyScript, filepath.Join(dir, "records.json")}
	if err := os.WriteFile(args[2], recs, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, data := range msgs {
		p := filepath.Join(dir, name+".eml")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	out, err := exec.CommandContext(t.Context(), "/usr/bin/python3", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("dkimpy: %v\n%s", err, out)
	}
	got := map[string][]bool{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		name := strings.TrimSuffix(f[0], ".eml")
		got[name] = []bool{}
		for _, v := range f[1:] {
			got[name] = append(got[name], v == "1")
		}
	}
	if len(got) != len(msgs) {
		t.Fatalf("dkimpy reported %d messages, want %d:\n%s", len(got), len(msgs), out)
	}
	return got
}

// verifyDKIMGo verifies data with go-msgauth's verifier and returns one
// result per signature.
func verifyDKIMGo(t *testing.T, records map[string]string, data []byte) []bool {
	t.Helper()
	vs, err := dkim.VerifyWithOptions(bytes.NewReader(data), &dkim.VerifyOptions{
		LookupTXT: func(domain string) ([]string, error) {
			if r, ok := records[domain]; ok {
				return []string{r}, nil
			}
			return nil, fmt.Errorf("no TXT record for %s", domain)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var oks []bool
	for _, v := range vs {
		oks = append(oks, v.Err == nil)
	}
	return oks
}

// signedHeaders returns the h= list of each DKIM-Signature field of data.
func signedHeaders(t *testing.T, data []byte) [][]string {
	t.Helper()
	head, _, _ := bytes.Cut(data, []byte("\r\n\r\n"))
	var out [][]string
	for field := range strings.SplitSeq(strings.ReplaceAll(string(head), "\r\n ", " "), "\r\n") {
		v, ok := strings.CutPrefix(field, "DKIM-Signature:")
		if !ok {
			continue
		}
		for tag := range strings.SplitSeq(v, ";") {
			name, val, _ := strings.Cut(tag, "=")
			if strings.TrimSpace(name) == "h" {
				val = strings.Join(strings.Fields(val), "")
				out = append(out, strings.Split(val, ":"))
			}
		}
	}
	return out
}

// TestDKIMVerifiedByDKIMPy signs every message of the corpus with an
// ed25519 and an rsa-2048 key and has dkimpy, an implementation
// independent of the signer's, verify both signatures of each.
func TestDKIMVerifiedByDKIMPy(t *testing.T) {
	// Its time goes to programs it runs: it waits beside the package's
	// other tests that run programs.
	t.Parallel()
	signers, records := testSigners(t)
	msgs := sendCorpus(t, postroom.Options{DKIM: signers})
	data := map[string][]byte{}
	for _, m := range msgs {
		data[m.name] = m.env.Data
	}
	got := verifyDKIMPy(t, records, data)
	for _, m := range msgs {
		if want := []bool{true, true}; !slices.Equal(got[m.name], want) {
			t.Errorf("%s: dkimpy verified %v, want %v", m.name, got[m.name], want)
		}
	}
}

// TestDKIMSignedHeaders checks which fields the signatures cover, each
// listed twice (oversigned, see TestDKIMOversigned): the fields every
// message may have, and the unsubscribe fields when the message has them.
func TestDKIMSignedHeaders(t *testing.T) {
	signers, records := testSigners(t)
	var always []string
	for _, k := range []string{"From", "Reply-To", "To", "Cc", "Subject", "Date", "Message-ID", "MIME-Version", "Content-Type", "Content-Transfer-Encoding"} {
		always = append(always, k, k)
	}
	want := map[string][]string{
		"unsubscribe-0":   append(slices.Clone(always), "List-Unsubscribe", "List-Unsubscribe", "List-Unsubscribe-Post", "List-Unsubscribe-Post"),
		"international-0": always,
		"workload-0":      append(slices.Clone(always), "List-Unsubscribe", "List-Unsubscribe"),
		"text-only-0":     always,
	}
	for _, m := range sendCorpus(t, postroom.Options{DKIM: signers}) {
		if oks := verifyDKIMGo(t, records, m.env.Data); !slices.Equal(oks, []bool{true, true}) {
			t.Errorf("%s: go-msgauth verified %v", m.name, oks)
		}
		w, ok := want[m.name]
		if !ok {
			continue
		}
		hs := signedHeaders(t, m.env.Data)
		if len(hs) != 2 {
			t.Fatalf("%s: %d signatures, want 2", m.name, len(hs))
		}
		for _, h := range hs {
			if !slices.EqualFunc(h, w, strings.EqualFold) {
				t.Errorf("%s: h=%v, want %v", m.name, h, w)
			}
		}
	}
}

// TestDKIMTamperedFails changes a signed message as a relay might (a body
// byte, the Subject, an added From) and checks that neither dkimpy nor
// go-msgauth verifies it, while the original verifies.
func TestDKIMTamperedFails(t *testing.T) {
	signers, records := testSigners(t)
	call := smallCall("ann@example.net")
	call.Message.Text = "Your code is 123456.\n"
	mem := map[string][]byte{}
	m := newMailer(t, postroom.TransportFunc(func(_ context.Context, env *postroom.Envelope) error {
		mem["x"] = bytes.Clone(env.Data)
		return nil
	}), postroom.Options{DKIM: signers})
	if _, err := m.Send(t.Context(), call); err != nil {
		t.Fatal(err)
	}
	orig := mem["x"]
	msgs := map[string][]byte{
		"original": orig,
		"body":     bytes.Replace(orig, []byte("123456"), []byte("123457"), 1),
		"subject":  bytes.Replace(orig, []byte("Subject: Hello Ann"), []byte("Subject: Hello Bob"), 1),
		"from":     append([]byte("From: Mallory <m@evil.example>\r\n"), orig...),
	}
	for name, data := range msgs {
		if name != "original" && bytes.Equal(data, orig) {
			t.Fatalf("%s: the change did not apply", name)
		}
	}
	py := verifyDKIMPy(t, records, msgs)
	for name, data := range msgs {
		want := name == "original"
		gv := verifyDKIMGo(t, records, data)
		for i := range 2 {
			if len(py[name]) != 2 || py[name][i] != want {
				t.Errorf("%s: dkimpy verified %v, want %v for both", name, py[name], want)
			}
			if len(gv) != 2 || gv[i] != want {
				t.Errorf("%s: go-msgauth verified %v, want %v for both", name, gv, want)
			}
		}
	}
}

// TestNewChecksDKIM checks that New refuses a signer it cannot sign with.
func TestNewChecksDKIM(t *testing.T) {
	ed := dkimKey(t, "ed25519")
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		s    postroom.DKIMSigner
		ok   bool
	}{
		{"ed25519", postroom.DKIMSigner{Domain: "example.com", Selector: "s1", Key: ed}, true},
		{"rsa-2048", postroom.DKIMSigner{Domain: "example.com", Selector: "mail.2026", Key: dkimKey(t, "rsa2048")}, true},
		{"rsa-1024", postroom.DKIMSigner{Domain: "example.com", Selector: "s1", Key: dkimKey(t, "rsa1024")}, false},
		{"ecdsa", postroom.DKIMSigner{Domain: "example.com", Selector: "s1", Key: ec}, false},
		{"nil key", postroom.DKIMSigner{Domain: "example.com", Selector: "s1"}, false},
		{"no domain", postroom.DKIMSigner{Selector: "s1", Key: ed}, false},
		{"domain without dot", postroom.DKIMSigner{Domain: "localhost", Selector: "s1", Key: ed}, false},
		{"no selector", postroom.DKIMSigner{Domain: "example.com", Key: ed}, false},
		{"selector with semicolon", postroom.DKIMSigner{Domain: "example.com", Selector: "s1;x=1", Key: ed}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := postroom.New(postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { return nil }),
				postroom.Options{Auth: postroom.NoAuth{}, DKIM: []postroom.DKIMSigner{tc.s}})
			if (err == nil) != tc.ok {
				t.Errorf("New: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// TestDKIMSignerFailure checks that a key that fails to sign defers the
// recipient (not-sent) and hands nothing to the transport.
func TestDKIMSignerFailure(t *testing.T) {
	sent := 0
	m := newMailer(t, postroom.TransportFunc(func(context.Context, *postroom.Envelope) error {
		sent++
		return nil
	}), postroom.Options{Concurrency: 1, DKIM: []postroom.DKIMSigner{{Domain: "example.com", Selector: "s1", Key: failingSigner{dkimKey(t, "ed25519")}}}})
	results, err := m.Send(t.Context(), smallCall("ann@example.net"))
	if err != nil {
		t.Fatal(err)
	}
	if r := results[0]; r.Status != postroom.StatusDeferred || r.Code != postroom.ReasonNotSent || r.Err == nil {
		t.Errorf("result %+v, want deferred not-sent with an error", r)
	}
	if sent != 0 {
		t.Errorf("the transport got %d messages", sent)
	}
}

// failingSigner is a key (an HSM, say) whose Sign fails.
type failingSigner struct{ crypto.Signer }

func (failingSigner) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) {
	return nil, errHSM
}

var errHSM = errors.New("hsm unavailable")

// TestDKIMOptionsCopied checks that New copies Options.DKIM: a signer the
// caller changes afterwards does not reach the Mailer.
func TestDKIMOptionsCopied(t *testing.T) {
	signers, records := testSigners(t)
	signers = signers[:1]
	var data []byte
	m := newMailer(t, postroom.TransportFunc(func(_ context.Context, env *postroom.Envelope) error {
		data = bytes.Clone(env.Data)
		return nil
	}), postroom.Options{Concurrency: 1, DKIM: signers})
	signers[0].Selector = "changed"
	if _, err := m.Send(t.Context(), smallCall("ann@example.net")); err != nil {
		t.Fatal(err)
	}
	if oks := verifyDKIMGo(t, records, data); !slices.Equal(oks, []bool{true}) {
		t.Errorf("verified %v, want one good signature with the selector given to New", oks)
	}
}

// TestDKIMDeterministic checks that signed output is byte-identical
// across Mailers given the same Options.Now and Options.Rand, the t= tag
// being Now's time.
func TestDKIMDeterministic(t *testing.T) {
	signers, _ := testSigners(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var outs [2][]byte
	for k := range outs {
		m := newMailer(t, postroom.TransportFunc(func(_ context.Context, env *postroom.Envelope) error {
			outs[k] = bytes.Clone(env.Data)
			return nil
		}), postroom.Options{DKIM: signers, Rand: &fixedRand{}, Now: func() time.Time { return now }})
		if _, err := m.Send(t.Context(), smallCall("ann@example.net")); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Fatalf("two Mailers with the same Now and Rand signed differently:\n%s\n%s", outs[0], outs[1])
	}
	fields, _ := cutDKIMFields(outs[0])
	if len(fields) != 2 {
		t.Fatalf("%d DKIM-Signature fields, want 2", len(fields))
	}
	for _, f := range fields {
		if got, want := dkimTag(f, "t"), strconv.FormatInt(now.Unix(), 10); got != want {
			t.Errorf("t=%s, want %s", got, want)
		}
	}
}

// TestDKIMMatchesGoMsgauth holds the signer to go-msgauth's, a signer
// written independently of it: for every message of the corpus,
// go-msgauth signs the unsigned message with the same key and h= list
// (oversigned as the Mailer's), and postroom's signature made at go-msgauth's t= must be the same
// field octet for octet. Both algorithms are deterministic (ed25519, and
// RSA PKCS #1 v1.5), so an equal b= means an equal header hash input, and
// an equal bh= an equal canonical body. The Mailer's own fields, with t=
// from Options.Now, must be those of the same signer at that time, and
// verify with go-msgauth: the Mailer signs in place and leaves its
// skeleton's static tail out of the canonicalization, signDKIM does
// neither, so this holds the Mailer's shortcuts to the full relaxed
// canonicalization on every message of the corpus.
func TestDKIMMatchesGoMsgauth(t *testing.T) {
	signers, records := testSigners(t)
	now := time.Date(2026, 11, 23, 12, 30, 0, 0, time.UTC)
	for _, m := range sendCorpus(t, postroom.Options{DKIM: signers, Now: func() time.Time { return now }}) {
		t.Run(m.name, func(t *testing.T) {
			data := m.env.Data
			fields, msg := cutDKIMFields(data)
			if len(fields) != len(signers) {
				t.Fatalf("%d DKIM-Signature fields, want %d", len(fields), len(signers))
			}
			if oks := verifyDKIMGo(t, records, data); len(oks) != 2 || !oks[0] || !oks[1] {
				t.Errorf("go-msgauth verified %v", oks)
			}
			keys := signedHeaders(t, data)[0]
			if ours, err := signDKIM(signers, keys, now, msg); err != nil || !bytes.Equal(ours, data) {
				t.Errorf("the Mailer's message differs from signDKIM's at Options.Now (err %v)", err)
			}
			for i, s := range signers {
				if got, want := dkimTag(fields[i], "t"), strconv.FormatInt(now.Unix(), 10); got != want {
					t.Errorf("signature %d: t=%s, want %s (Options.Now)", i, got, want)
				}
				theirs := goMsgauthSign(t, s, keys, msg)
				ts, err := strconv.ParseInt(dkimTag(theirs, "t"), 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				ours, err := signDKIM([]postroom.DKIMSigner{s}, keys, time.Unix(ts, 0), msg)
				if err != nil {
					t.Fatal(err)
				}
				ours = ours[:len(ours)-len(msg)]
				if got, want := dkimTag(ours, "bh"), dkimTag(theirs, "bh"); got != want {
					t.Errorf("%s: bh=%s, go-msgauth's %s", s.Selector, got, want)
				}
				if !bytes.Equal(ours, theirs) {
					t.Errorf("%s: field\n%q\ngo-msgauth's\n%q", s.Selector, ours, theirs)
				}
			}
		})
	}
}

// goMsgauthSign returns go-msgauth's DKIM-Signature field for msg, signed
// with s, relaxed/relaxed, over the fields named in keys.
func goMsgauthSign(t *testing.T, s postroom.DKIMSigner, keys []string, msg []byte) []byte {
	t.Helper()
	signer, err := dkim.NewSigner(&dkim.SignOptions{
		Domain:                 s.Domain,
		Selector:               s.Selector,
		Signer:                 s.Key,
		Hash:                   crypto.SHA256,
		HeaderCanonicalization: dkim.CanonicalizationRelaxed,
		BodyCanonicalization:   dkim.CanonicalizationRelaxed,
		HeaderKeys:             keys,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signer.Write(msg); err != nil {
		signer.Close()
		t.Fatal(err)
	}
	if err := signer.Close(); err != nil {
		t.Fatal(err)
	}
	return []byte(signer.Signature())
}

// cutDKIMFields returns the DKIM-Signature fields at the top of data and
// the message after them.
func cutDKIMFields(data []byte) (fields [][]byte, msg []byte) {
	for bytes.HasPrefix(data, []byte("DKIM-Signature:")) {
		end := 0
		for {
			i := bytes.Index(data[end:], []byte("\r\n"))
			if i < 0 {
				return fields, data
			}
			end += i + 2
			if end == len(data) || data[end] != ' ' && data[end] != '\t' {
				break
			}
		}
		fields, data = append(fields, data[:end]), data[end:]
	}
	return fields, data
}

// dkimTag returns the value of tag name in a DKIM-Signature field, its
// folding white space removed.
func dkimTag(field []byte, name string) string {
	_, v, _ := strings.Cut(string(field), ":")
	for tag := range strings.SplitSeq(v, ";") {
		k, val, _ := strings.Cut(tag, "=")
		if strings.TrimSpace(k) == name {
			return strings.Join(strings.Fields(val), "")
		}
	}
	return ""
}

// signDKIM signs msg with signers as internal/dkim signs for a Mailer,
// covering the header fields named in keys (the h= list), with t= at
// date, but without the Mailer's shortcuts (no static tail, no room
// reserved ahead of the message), and returns the DKIM-Signature fields
// followed by msg.
func signDKIM(signers []postroom.DKIMSigner, keys []string, date time.Time, msg []byte) ([]byte, error) {
	ks := make([]pdkim.Signer, len(signers))
	for i, s := range signers {
		ks[i] = pdkim.Signer(s)
	}
	var s pdkim.Scratch
	fields, err := pdkim.NewCallKeys(ks, keys, date).AppendFields(&s, nil, msg)
	return append(fields, msg...), err
}
