package postroom

// DKIM signing (RFC 6376) of every message, between the MIME layer and the
// Transport: relaxed/relaxed canonicalization (dkim_canon.go) with
// sha256, rsa-sha256 (PKCS #1 v1.5) and ed25519-sha256 (RFC 8463), on the
// standard library's crypto.
//
// What is the same for every message of a call is made once per call: the
// h= list, each signer's DKIM-Signature field but for its bh= and b=
// values (and its canonical form), and which lines at the end of every
// message (the skeleton's static tail: images and attachments in base64
// lines) are canonical as they are. A message then costs one SHA-256 pass
// over its body, in which only the per-recipient parts are canonicalized,
// its signed header fields rewritten into a reused buffer, and one
// signature per key.
//
// go-msgauth and dkimpy verify the output in the tests; a differential
// test and FuzzDKIMCanon hold the signer to go-msgauth's signatures octet
// for octet, and FuzzDKIMStaticTail holds the static tail's shortcut to
// the full canonicalization.

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding"
	"encoding/base64"
	"fmt"
	"hash"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/postroom/postroom/internal/mimemsg"
)

// MinDKIMRSABits is the smallest RSA key a DKIMSigner accepts, in bits
// (RFC 8301 §3.2 requires verifiers to accept 1024 to 4096; 2048 is what
// Gmail and Yahoo ask of bulk senders).
const MinDKIMRSABits = 2048

// DKIMSigner is one DKIM key a Mailer signs every message with (see
// Options.DKIM). New checks it; the zero DKIMSigner is not valid.
type DKIMSigner struct {
	// Domain is the signing domain (the d= tag), such as "example.com",
	// in lower-case A-label form: its DNS holds the public key at Selector._domainkey.Domain. For
	// DMARC to pass it must be, or be a parent of, the domain of the
	// calls' from_email; the Mailer does not check that.
	Domain string

	// Selector is the key's selector (the s= tag), such as "mail2026".
	Selector string

	// Key is the private key: an ed25519.PrivateKey (ed25519-sha256,
	// RFC 8463) or an *rsa.PrivateKey of at least MinDKIMRSABits bits
	// (rsa-sha256), or any crypto.Signer whose Public is one of those
	// (a key in an HSM). It is used from many goroutines at once.
	Key crypto.Signer
}

// checkDeliverability checks the Options fields of deliverability (DKIM,
// VERP); New calls it.
func (o *Options) checkDeliverability() error {
	if err := o.checkDKIM(); err != nil {
		return err
	}
	return o.checkVERP()
}

// checkDKIM checks Options.DKIM and copies the slice, so that the caller's
// later changes do not reach the Mailer.
func (o *Options) checkDKIM() error {
	if len(o.DKIM) == 0 {
		o.DKIM = nil
		return nil
	}
	o.DKIM = append([]DKIMSigner(nil), o.DKIM...)
	for i, s := range o.DKIM {
		bad := func(format string, args ...any) error {
			return fmt.Errorf("postroom: New: Options.DKIM[%d]: "+format, append([]any{i}, args...)...)
		}
		if p := checkHostname(s.Domain); p != "" {
			return bad("Domain %q: %s", s.Domain, p)
		}
		if !isDKIMSelector(s.Selector) {
			return bad("Selector %q is not a DNS name (letters, digits and hyphens in dot-separated labels, RFC 6376 §3.1)", s.Selector)
		}
		if s.Key == nil {
			return bad("Key is nil")
		}
		switch pub := s.Key.Public().(type) {
		case ed25519.PublicKey:
		case *rsa.PublicKey:
			if n := pub.N.BitLen(); n < MinDKIMRSABits {
				return bad("RSA key of %d bits, at least %d needed", n, MinDKIMRSABits)
			}
		default:
			return bad("Key is a %T: use an ed25519 or RSA key", pub)
		}
	}
	return nil
}

// isDKIMSelector reports whether s is a selector: sub-domains separated by
// dots (RFC 6376 §3.1), each of letters, digits and inner hyphens, at most
// 63 octets.
func isDKIMSelector(s string) bool {
	if s == "" || len(s) > maxDomain {
		return false
	}
	for l := range strings.SplitSeq(s, ".") {
		if l == "" || len(l) > maxLabel || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i] | 0x20
			if !(c >= 'a' && c <= 'z' || l[i] >= '0' && l[i] <= '9' || l[i] == '-') {
				return false
			}
		}
	}
	return true
}

// dkimSigned are the header fields every signature covers, whether the
// message has them or not. Each is listed twice in h=: the first matches
// the message's field, the second (both, when the message has none)
// matches nothing, so that a field of the name added in transit, which
// some mail readers show instead of the signed one, breaks the signature
// (oversigning, RFC 6376 §5.4.2 and §8.15). Content-Type and
// Content-Transfer-Encoding are the top-level ones; the latter is there
// only in a single-part message. Postroom writes no Cc, but a Cc added
// in transit would show as one of the addressees.
var dkimSigned = []string{
	"From", "Reply-To", "To", "Cc", "Subject", "Date", "Message-ID",
	"MIME-Version", "Content-Type", "Content-Transfer-Encoding",
}

// dkimSignedOptional are the custom header fields signed, twice like
// dkimSigned, when a call's messages have them; when they do not, the
// name is not listed, because a mailing list that forwards the message
// adds List-* fields of its own (RFC 2369) and that must not break it.
var dkimSignedOptional = []string{"List-Unsubscribe", "List-Unsubscribe-Post", "In-Reply-To", "References"}

// dkimCall is a call's signing, set up once: the signed field names,
// per signer its DKIM-Signature field but for the bh= and b= values, and
// the canonical span of the static tail every message ends with.
type dkimCall struct {
	keys      []string // the h= list
	nth       []int    // keys[i] is the nth[i]-th of its name in keys, from 0
	sigs      []dkimSig
	tail      staticTail
	fieldsLen int // the length of the DKIM-Signature fields of any message
}

// dkimSig is one signer's part of a dkimCall.
type dkimSig struct {
	key  crypto.Signer
	opts crypto.SignerOpts // crypto.SHA256 for RSA; ed25519 signs the digest itself
	size int               // the signature's length: the key's
	// head and tail are the DKIM-Signature field before and after the bh=
	// value; tail ends with "b=". canonHead and canonTail are the same in
	// relaxed form, as the header hash input ends with them.
	head, tail, canonHead, canonTail []byte
}

// dkimBodyHashLen is the length of a bh= value: a SHA-256 in base64.
const dkimBodyHashLen = (sha256.Size + 2) / 3 * 4

// dkimScratch is one render goroutine's signing state, reused from
// message to message.
type dkimScratch struct {
	h      hash.Hash // the body hash
	fields []dkimField
	names  [][]byte // the fields' names
	body   []byte   // rewritten body lines
	input  []byte   // the signed fields, the start of the header hash input
	state  []byte   // the header hash's state after them
	b64    []byte
	bh     []byte
	digest []byte
	head   []byte // the DKIM-Signature fields, for signInPlace
	out    []byte // signInPlace's copy
}

// dkimKeys returns the h= list of a call whose custom headers are
// headers: every name of dkimSigned, and of dkimSignedOptional those
// among headers, each twice.
func dkimKeys(headers []mimemsg.Header) []string {
	var keys []string
	for _, name := range dkimSigned {
		keys = append(keys, name, name)
	}
	for _, name := range dkimSignedOptional {
		for _, h := range headers {
			if strings.EqualFold(h.Name, name) {
				keys = append(keys, name, name)
				break
			}
		}
	}
	return keys
}

// newDKIMCall returns the signing of the messages skel builds for layout
// l, with l.Date as the signatures' t=; nil when signers is empty.
func newDKIMCall(signers []DKIMSigner, l *mimemsg.Layout, skel *mimemsg.Skeleton) *dkimCall {
	if len(signers) == 0 {
		return nil
	}
	d := newDKIMCallKeys(signers, dkimKeys(l.Headers), l.Date)
	d.tail = newStaticTail(skel.StaticTail())
	return d
}

// newDKIMCallKeys returns the signing of the header fields named in keys
// (the h= list) with each signer, with date as the t= tag.
func newDKIMCallKeys(signers []DKIMSigner, keys []string, date time.Time) *dkimCall {
	d := &dkimCall{keys: keys, nth: make([]int, len(keys)), sigs: make([]dkimSig, len(signers))}
	for i, k := range keys {
		for _, prev := range keys[:i] {
			if strings.EqualFold(prev, k) {
				d.nth[i]++
			}
		}
	}
	t := max(date.Unix(), 0) // t= is digits (RFC 6376 §3.5)
	for i, s := range signers {
		d.sigs[i] = newDKIMSig(s, strings.Join(keys, ":"), strconv.FormatInt(t, 10))
		sig := &d.sigs[i]
		d.fieldsLen += len(sig.head) + dkimBodyHashLen + len(sig.tail) +
			len(appendFoldedB(nil, make([]byte, base64.StdEncoding.EncodedLen(sig.size))))
	}
	return d
}

// newDKIMSig makes signer s's DKIM-Signature field for the h= list and
// t= value given, tags in the order and folding go-msgauth writes them
// (sorted by name, a line broken before a tag that would take it past 75
// octets, b= last on lines of its own), so that signatures can be compared
// with go-msgauth's octet for octet.
func newDKIMSig(s DKIMSigner, h, t string) dkimSig {
	sig := dkimSig{key: s.Key, opts: crypto.SHA256, head: []byte("DKIM-Signature:")}
	algo := "rsa-sha256"
	switch pub := s.Key.Public().(type) {
	case ed25519.PublicKey:
		algo, sig.opts, sig.size = "ed25519-sha256", crypto.Hash(0), ed25519.SignatureSize
	case *rsa.PublicKey:
		sig.size = pub.Size() // PKCS #1 v1.5: the modulus's length
	}
	placeholder := strings.Repeat("x", dkimBodyHashLen)
	field, line := sig.head, 0
	for _, tag := range [...]struct{ k, v string }{
		{"a", algo}, {"bh", placeholder}, {"c", "relaxed/relaxed"}, {"d", s.Domain},
		{"h", h}, {"s", s.Selector}, {"t", t}, {"v", "1"},
	} {
		if 3+line+len(tag.k)+len(tag.v) > 75 {
			field, line = append(field, "\r\n"...), 0
		}
		field = append(append(append(append(append(field, ' '), tag.k...), '='), tag.v...), ';')
		line += 3 + len(tag.k) + len(tag.v)
	}
	field = append(field, "\r\n b="...)
	canon := appendRelaxedField(nil, field)
	canon = canon[:len(canon)-2] // the field being signed, without its CRLF
	at := bytes.Index(field, []byte("bh=")) + 3
	sig.head, sig.tail = field[:at], field[at+dkimBodyHashLen:]
	at = bytes.Index(canon, []byte("bh=")) + 3
	sig.canonHead, sig.canonTail = canon[:at], canon[at+dkimBodyHashLen:]
	return sig
}

// sign appends to dst[:0] one DKIM-Signature field per signer, then msg,
// and returns the extended buffer. msg must not alias dst.
func (d *dkimCall) sign(s *dkimScratch, dst, msg []byte) ([]byte, error) {
	dst, err := d.appendFields(s, dst[:0], msg)
	if err != nil {
		return dst, err
	}
	return append(dst, msg...), nil
}

// room returns the length of the DKIM-Signature fields d makes for any
// message (each signature's length is its key's): 0 for a nil d.
func (d *dkimCall) room() int {
	if d == nil {
		return 0
	}
	return d.fieldsLen
}

// reserve returns buf[:d.room()], grown as needed: the room for the
// DKIM-Signature fields, ahead of the message to be appended to it for
// signInPlace.
func (d *dkimCall) reserve(buf []byte) []byte {
	n := d.room()
	return slices.Grow(buf[:0], n)[:n]
}

// signInPlace signs the message buf[d.room():] (buf came from reserve),
// writes its DKIM-Signature fields into buf[:d.room()] and returns buf:
// the message is not copied. Should a key's signature not be of the
// length its key gives, the signed message is a copy in the scratch.
func (d *dkimCall) signInPlace(s *dkimScratch, buf []byte) ([]byte, error) {
	n := d.room()
	msg := buf[n:]
	var err error
	if s.head, err = d.appendFields(s, s.head[:0], msg); err != nil {
		return nil, err
	}
	if len(s.head) == n {
		copy(buf, s.head)
		return buf, nil
	}
	s.out = append(append(s.out[:0], s.head...), msg...)
	return s.out, nil
}

// appendFields appends to dst one DKIM-Signature field per signer for
// msg. The body hash and the signed header fields are the same for every
// signer, so they are made once.
func (d *dkimCall) appendFields(s *dkimScratch, dst, msg []byte) ([]byte, error) {
	var (
		body int
		err  error
	)
	if s.fields, body, err = scanHeader(s.fields, msg); err != nil {
		return dst, err
	}
	if s.h == nil {
		s.h = sha256.New()
	}
	s.h.Reset()
	s.body = hashRelaxedBody(s.h, msg[body:], s.body, d.tail.span(msg, body))
	s.digest = s.h.Sum(s.digest[:0])
	s.bh = base64.StdEncoding.AppendEncode(s.bh[:0], s.digest)

	// The signed fields, each the nth[i]-th of its name from the bottom
	// (RFC 6376 §5.4.2); a name listed more often than the message has it
	// adds nothing.
	s.names = s.names[:0]
	for _, f := range s.fields {
		s.names = append(s.names, fieldName(msg[f.start:f.end]))
	}
	s.input = s.input[:0]
	for i, key := range d.keys {
		n := d.nth[i]
		for j := len(s.fields) - 1; j >= 0; j-- {
			if !equalFoldASCII(s.names[j], key) {
				continue
			}
			if n == 0 {
				s.input = appendRelaxedField(s.input, msg[s.fields[j].start:s.fields[j].end])
				break
			}
			n--
		}
	}
	// The header hash input starts with the signed fields for every
	// signer: they are hashed once, and the hash's state kept for the
	// signers after the first.
	s.h.Reset()
	s.h.Write(s.input)
	if len(d.sigs) > 1 {
		var err error
		if s.state, err = s.h.(encoding.BinaryAppender).AppendBinary(s.state[:0]); err != nil {
			return dst, err
		}
	}
	for i := range d.sigs {
		sig := &d.sigs[i]
		if i > 0 {
			if err := s.h.(encoding.BinaryUnmarshaler).UnmarshalBinary(s.state); err != nil {
				return dst, err
			}
		}
		s.h.Write(sig.canonHead)
		s.h.Write(s.bh)
		s.h.Write(sig.canonTail)
		s.digest = s.h.Sum(s.digest[:0])
		b, err := sig.key.Sign(rand.Reader, s.digest, sig.opts)
		if err != nil {
			return dst, err
		}
		s.b64 = base64.StdEncoding.AppendEncode(s.b64[:0], b)
		dst = append(append(append(dst, sig.head...), s.bh...), sig.tail...)
		dst = appendFoldedB(dst, s.b64)
	}
	return dst, nil
}

// appendFoldedB appends the b= value v after "b=" as go-msgauth folds it:
// " b=" and the value cut into lines of 75 octets, each continued with
// CRLF SP, and a final CRLF.
func appendFoldedB(dst, v []byte) []byte {
	n := min(len(v), 75-len(" b="))
	dst, v = append(dst, v[:n]...), v[n:]
	for len(v) > 0 {
		n = min(len(v), 75)
		dst, v = append(append(dst, "\r\n "...), v[:n]...), v[n:]
	}
	return append(dst, "\r\n"...)
}
