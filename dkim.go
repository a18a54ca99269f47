package postroom

// DKIM signing (RFC 6376) of every message, between the MIME layer and the
// Transport.
//
// The cryptography and the canonicalisation are github.com/emersion/go-msgauth's
// dkim package, the one Go mail servers (maddy, go-smtp based relays) sign
// and verify with: relaxed canonicalisation is easy to get subtly wrong
// (white space runs, folded lines, trailing empty lines), and a signature
// that does not verify is worse than none. This file decides what is
// signed and with which keys, once per call, and prepends the
// DKIM-Signature fields to each message.

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"fmt"
	"strings"

	"github.com/emersion/go-msgauth/dkim"
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
// VERP) and fills in their defaults; New calls it.
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

// dkimSignedAlways are the header fields every message has and every
// signature covers. From is listed twice: the second, with no field to
// match, makes a From field added in transit break the signature
// (oversigning, RFC 6376 §5.4.2). Content-Type is the top-level one.
var dkimSignedAlways = []string{"From", "From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "Content-Type"}

// dkimSignedOptional are the header fields signed when a call's messages
// have them (Reply-To, or a custom header of that name).
var dkimSignedOptional = []string{"Reply-To", "List-Unsubscribe", "List-Unsubscribe-Post"}

// dkimCall is a call's signing, set up once: one SignOptions per signer,
// with the header fields that the call's messages have.
type dkimCall struct {
	opts []dkim.SignOptions
}

// newDKIMCall returns the signing of a call whose messages have a
// Reply-To field when replyTo, and the custom headers named in headers;
// nil when signers is empty.
func newDKIMCall(signers []DKIMSigner, replyTo bool, headers []Header) *dkimCall {
	if len(signers) == 0 {
		return nil
	}
	keys := append([]string(nil), dkimSignedAlways...)
	for _, name := range dkimSignedOptional {
		present := name == "Reply-To" && replyTo
		for _, h := range headers {
			present = present || strings.EqualFold(h.Name, name)
		}
		if present {
			keys = append(keys, name)
		}
	}
	d := &dkimCall{opts: make([]dkim.SignOptions, len(signers))}
	for i, s := range signers {
		d.opts[i] = dkim.SignOptions{
			Domain:                 s.Domain,
			Selector:               s.Selector,
			Signer:                 s.Key,
			Hash:                   crypto.SHA256,
			HeaderCanonicalization: dkim.CanonicalizationRelaxed,
			BodyCanonicalization:   dkim.CanonicalizationRelaxed,
			HeaderKeys:             keys,
		}
	}
	return d
}

// sign appends to dst[:0] one DKIM-Signature field per signer, then msg,
// and returns the extended buffer. msg must not alias dst.
func (d *dkimCall) sign(dst, msg []byte) ([]byte, error) {
	dst = dst[:0]
	for i := range d.opts {
		s, err := dkim.NewSigner(&d.opts[i])
		if err != nil {
			return dst, err
		}
		if _, err := bytes.NewReader(msg).WriteTo(s); err != nil {
			s.Close()
			return dst, err
		}
		if err := s.Close(); err != nil {
			return dst, err
		}
		dst = append(dst, s.Signature()...)
	}
	return append(dst, msg...), nil
}
