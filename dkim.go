package postroom

// Options.DKIM: the keys every message is signed with, checked by New. The
// signing itself (canonicalization, the DKIM-Signature fields) is
// internal/dkim's, which imports nothing of this package; newDKIMCall
// hands it a call's signers once per call.

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"fmt"
	"strings"

	"github.com/postroom/postroom/internal/dkim"
	"github.com/postroom/postroom/internal/mimemsg"
	"github.com/postroom/postroom/option"
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
		bad := func(field, format string, args ...any) error {
			return option.Errorf(opNew, fmt.Sprintf("Options.DKIM[%d].%s", i, field), format, args...)
		}
		if p := checkHostname(s.Domain); p != "" {
			return bad("Domain", "%q: %s", s.Domain, p)
		}
		if !isDKIMSelector(s.Selector) {
			return bad("Selector", "%q is not a DNS name (letters, digits and hyphens in dot-separated labels, RFC 6376 §3.1)", s.Selector)
		}
		if s.Key == nil {
			return bad("Key", "is nil")
		}
		switch pub := s.Key.Public().(type) {
		case ed25519.PublicKey:
		case *rsa.PublicKey:
			if n := pub.N.BitLen(); n < MinDKIMRSABits {
				return bad("Key", "is an RSA key of %d bits, at least %d needed", n, MinDKIMRSABits)
			}
		default:
			return bad("Key", "is a %T: use an ed25519 or RSA key", pub)
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

// newDKIMCall returns the signing of the messages skel builds for layout
// l, with l.Date as the signatures' t=; nil when signers is empty.
func newDKIMCall(signers []DKIMSigner, l *mimemsg.Layout, skel *mimemsg.Skeleton) *dkim.Call {
	if len(signers) == 0 {
		return nil
	}
	keys := make([]dkim.Signer, len(signers))
	for i, s := range signers {
		keys[i] = dkim.Signer(s)
	}
	return dkim.NewCall(keys, l, skel)
}
