package postroom_test

import (
	"bytes"
	"crypto"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-msgauth/dkim"
	"github.com/postroom/postroom"
)

// TestDKIMMatchesGoMsgauth holds the signer to go-msgauth's, a signer
// written independently of it: for every message of the corpus,
// go-msgauth signs the unsigned message with the same key and h= list
// (oversigned as the Mailer's), and postroom's signature made at go-msgauth's t= must be the same
// field octet for octet. Both algorithms are deterministic (ed25519, and
// RSA PKCS #1 v1.5), so an equal b= means an equal header hash input, and
// an equal bh= an equal canonical body. The Mailer's own fields, with t=
// from Options.Now, must be those of the same signer at that time, and
// verify with go-msgauth: the Mailer signs in place and leaves its
// skeleton's static tail out of the canonicalization, SignDKIM does
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
			if ours, err := postroom.SignDKIM(signers, keys, now, msg); err != nil || !bytes.Equal(ours, data) {
				t.Errorf("the Mailer's message differs from SignDKIM's at Options.Now (err %v)", err)
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
				ours, err := postroom.SignDKIM([]postroom.DKIMSigner{s}, keys, time.Unix(ts, 0), msg)
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
