package dkim

// The signer: a call's Call, made once (the h= list, each key's
// DKIM-Signature field but for bh= and b=), and each message's fields,
// written into the room reserved ahead of it.

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding"
	"encoding/base64"
	"hash"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/postroom/postroom/internal/mimemsg"
)

// Signer is one key messages are signed with: the root's DKIMSigner,
// checked by its New (the signing domain, a DNS selector, an ed25519 key
// or an RSA key of at least 2048 bits).
type Signer struct {
	Domain   string        // the d= tag
	Selector string        // the s= tag
	Key      crypto.Signer // used from many goroutines at once
}

// signedFields are the header fields every signature covers, whether the
// message has them or not. Each is listed twice in h=: the first matches
// the message's field, the second (both, when the message has none)
// matches nothing, so that a field of the name added in transit, which
// some mail readers show instead of the signed one, breaks the signature
// (oversigning, RFC 6376 §5.4.2 and §8.15). Content-Type and
// Content-Transfer-Encoding are the top-level ones; the latter is there
// only in a single-part message. Postroom writes no Cc, but a Cc added
// in transit would show as one of the addressees.
var signedFields = []string{
	"From", "Reply-To", "To", "Cc", "Subject", "Date", "Message-ID",
	"MIME-Version", "Content-Type", "Content-Transfer-Encoding",
}

// optionalFields are the custom header fields signed, twice like
// signedFields, when a call's messages have them; when they do not, the
// name is not listed, because a mailing list that forwards the message
// adds List-* fields of its own (RFC 2369) and that must not break it.
var optionalFields = []string{"List-Unsubscribe", "List-Unsubscribe-Post", "In-Reply-To", "References"}

// Call is a call's signing, set up once: the signed field names,
// per signer its DKIM-Signature field but for the bh= and b= values, and
// the canonical span of the static tail every message ends with.
type Call struct {
	keys      []string // the h= list
	nth       []int    // keys[i] is the nth[i]-th of its name in keys, from 0
	sigs      []signature
	tail      staticTail
	fieldsLen int // the length of the DKIM-Signature fields of any message
}

// signature is one signer's part of a Call.
type signature struct {
	key  crypto.Signer
	opts crypto.SignerOpts // crypto.SHA256 for RSA; ed25519 signs the digest itself
	size int               // the signature's length: the key's
	// head and tail are the DKIM-Signature field before and after the bh=
	// value; tail ends with "b=". canonHead and canonTail are the same in
	// relaxed form, as the header hash input ends with them.
	head, tail, canonHead, canonTail []byte
}

// bodyHashLen is the length of a bh= value: a SHA-256 in base64.
const bodyHashLen = (sha256.Size + 2) / 3 * 4

// Scratch is one render goroutine's signing state, reused from
// message to message.
type Scratch struct {
	h      hash.Hash // the body hash
	fields []headerField
	names  [][]byte // the fields' names
	body   []byte   // rewritten body lines
	input  []byte   // the signed fields, the start of the header hash input
	state  []byte   // the header hash's state after them
	b64    []byte
	bh     []byte
	digest []byte
	head   []byte // the DKIM-Signature fields, for SignInPlace
	out    []byte // SignInPlace's copy
}

// headerKeys returns the h= list of a call whose custom headers are
// headers: every name of signedFields, and of optionalFields those
// among headers, each twice.
func headerKeys(headers []mimemsg.Header) []string {
	var keys []string
	for _, name := range signedFields {
		keys = append(keys, name, name)
	}
	for _, name := range optionalFields {
		for _, h := range headers {
			if strings.EqualFold(h.Name, name) {
				keys = append(keys, name, name)
				break
			}
		}
	}
	return keys
}

// NewCall returns the signing of the messages skel builds for layout
// l, with l.Date as the signatures' t=; nil when signers is empty.
func NewCall(signers []Signer, l *mimemsg.Layout, skel *mimemsg.Skeleton) *Call {
	if len(signers) == 0 {
		return nil
	}
	d := NewCallKeys(signers, headerKeys(l.Headers), l.Date)
	d.tail = newStaticTail(skel.StaticTail())
	return d
}

// NewCallKeys returns the signing of the header fields named in keys
// (the h= list) with each signer, with date as the t= tag.
func NewCallKeys(signers []Signer, keys []string, date time.Time) *Call {
	d := &Call{keys: keys, nth: make([]int, len(keys)), sigs: make([]signature, len(signers))}
	for i, k := range keys {
		for _, prev := range keys[:i] {
			if strings.EqualFold(prev, k) {
				d.nth[i]++
			}
		}
	}
	t := max(date.Unix(), 0) // t= is digits (RFC 6376 §3.5)
	for i, s := range signers {
		d.sigs[i] = newSignature(s, strings.Join(keys, ":"), strconv.FormatInt(t, 10))
		sig := &d.sigs[i]
		d.fieldsLen += len(sig.head) + bodyHashLen + len(sig.tail) +
			len(appendFoldedB(nil, make([]byte, base64.StdEncoding.EncodedLen(sig.size))))
	}
	return d
}

// newSignature makes signer s's DKIM-Signature field for the h= list and
// t= value given, tags in the order and folding go-msgauth writes them
// (sorted by name, a line broken before a tag that would take it past 75
// octets, b= last on lines of its own), so that signatures can be compared
// with go-msgauth's octet for octet.
func newSignature(s Signer, h, t string) signature {
	sig := signature{key: s.Key, opts: crypto.SHA256, head: []byte("DKIM-Signature:")}
	algo := "rsa-sha256"
	switch pub := s.Key.Public().(type) {
	case ed25519.PublicKey:
		algo, sig.opts, sig.size = "ed25519-sha256", crypto.Hash(0), ed25519.SignatureSize
	case *rsa.PublicKey:
		sig.size = pub.Size() // PKCS #1 v1.5: the modulus's length
	}
	placeholder := strings.Repeat("x", bodyHashLen)
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
	sig.head, sig.tail = field[:at], field[at+bodyHashLen:]
	at = bytes.Index(canon, []byte("bh=")) + 3
	sig.canonHead, sig.canonTail = canon[:at], canon[at+bodyHashLen:]
	return sig
}

// Room returns the length of the DKIM-Signature fields d makes for any
// message (each signature's length is its key's): 0 for a nil d.
func (d *Call) Room() int {
	if d == nil {
		return 0
	}
	return d.fieldsLen
}

// Reserve returns buf[:d.Room()], grown as needed: the room for the
// DKIM-Signature fields, ahead of the message to be appended to it for
// SignInPlace.
func (d *Call) Reserve(buf []byte) []byte {
	n := d.Room()
	return slices.Grow(buf[:0], n)[:n]
}

// SignInPlace signs the message buf[d.Room():] (buf came from Reserve),
// writes its DKIM-Signature fields into buf[:d.Room()] and returns buf:
// the message is not copied. Should a key's signature not be of the
// length its key gives, the signed message is a copy in the scratch.
func (d *Call) SignInPlace(s *Scratch, buf []byte) ([]byte, error) {
	n := d.Room()
	msg := buf[n:]
	var err error
	if s.head, err = d.AppendFields(s, s.head[:0], msg); err != nil {
		return nil, err
	}
	if len(s.head) == n {
		copy(buf, s.head)
		return buf, nil
	}
	s.out = append(append(s.out[:0], s.head...), msg...)
	return s.out, nil
}

// AppendFields appends to dst one DKIM-Signature field per signer for
// msg. The body hash and the signed header fields are the same for every
// signer, so they are made once.
func (d *Call) AppendFields(s *Scratch, dst, msg []byte) ([]byte, error) {
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
